/**
 * The agent-loop benchmark's test runner (bench/agent-loop/sandbox.ts): verdicts from the
 * tests, the first failing assert as the detail, and every limit ending a run as a failure.
 */
import { describe, expect, it } from 'vitest';
import { Sandbox } from '../../bench/agent-loop/sandbox.js';

const problem = { id: 'double', tests: ['assert f(1) == 2', 'assert f(2) == 4'], test_imports: [] };

describe('agent-loop sandbox', () => {
  const sandbox = new Sandbox(undefined, { cpuSeconds: 2, memoryKiB: 512 * 1024, fileKiB: 64, wallMs: 8_000, parallel: 2 });

  it('passes code that passes every test, whatever it prints', async () => {
    expect(await sandbox.verdict('def f(x):\n    print("noise")\n    return 2 * x', problem)).toEqual({ passed: true, first_passed: true, detail: null });
  });

  it('fails on the first failing assert, and tells whether the first test passed', async () => {
    const v = await sandbox.verdict('def f(x):\n    return x + 1', problem);
    expect(v).toEqual({ passed: false, first_passed: true, detail: expect.stringContaining('assert f(2) == 4 -> AssertionError') });
    const other = await sandbox.verdict('def g(x):\n    return x', problem);
    expect(other).toMatchObject({ passed: false, first_passed: false, detail: expect.stringContaining('NameError') });
  });

  it('a set-up line runs as code before the asserts', async () => {
    const withSetup = { id: 'setup', tests: ['k = 3', 'assert f(k) == 6'], test_imports: ['import math'] };
    expect(await sandbox.verdict('def f(x):\n    return int(math.fabs(2 * x))', withSetup)).toMatchObject({ passed: true, first_passed: true });
  });

  it('an endless loop, a huge allocation, a big file and an exit all fail', async () => {
    for (const code of ['while True:\n    pass', 'x = bytearray(4 * 10**9)', 'open("big", "w").write("x" * 10**7)', 'import sys\nsys.exit(0)', 'import os\nos._exit(0)']) {
      expect(await sandbox.verdict(code, problem), code).toMatchObject({ passed: false });
    }
  });

  it('caches the verdict per code and problem', async () => {
    const before = sandbox.runs;
    await sandbox.verdict('def f(x):\n    return 2 * x', problem);
    await sandbox.verdict('def f(x):\n    return 2 * x', problem);
    expect(sandbox.runs - before).toBe(1);
  });
});
