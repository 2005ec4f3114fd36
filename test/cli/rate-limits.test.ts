import { beforeAll, describe, expect, it } from 'vitest';
import { reply } from '../fixtures/fake-llm/server.js';
import { runCli } from '../support/cli.js';
import { useServerWithFakeLlm } from '../support/llm-server.js';

/**
 * The CLI against a server with tiny limits and a 2-second window
 * (SERVICE_RATE_LIMIT_WINDOW_SECONDS): work that goes over the limit completes by waiting
 * for the window the server names, instead of failing with 429. No test sleeps; the waits
 * are the server's short windows.
 */
const ctx = useServerWithFakeLlm('svc-cli-limits-', {
  env: { SERVICE_RATE_LIMIT_EXPENSIVE: '2', SERVICE_RATE_LIMIT_DEFAULT: '3', SERVICE_RATE_LIMIT_WINDOW_SECONDS: '2' },
});
beforeAll(() => {
  ctx.fake.script(() => reply.json({
    task_alignment: 8, code_quality: 8, workspace_usage: 8, robustness: 8, overall: 8, feedback: 'Fine.', hardcoded: false,
  }));
});

const WAIT_LINE = /^rate limited \(HTTP 429\): waiting \d+\.\d s before retry \d+ of POST \/v1\/evaluate$/;

describe('rate limits from the command line', () => {
  it('a batch of 15 evaluate cases over the expensive limit passes, one stderr line per wait', async () => {
    const cases = Array.from({ length: 15 }, (_, i) => JSON.stringify({ name: `case ${i + 1}`, task: `task ${i}`, code: `x = ${i}` })).join('\n');
    const res = await runCli(['evaluate', '--batch', '-', '--num-evals', '1', '--concurrency', '3', '--url', ctx.server.url], { input: cases });
    expect(res.stderr.split('\n').filter((l) => l && !WAIT_LINE.test(l))).toEqual([]);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { summary: { cases: number; passed: number; errors: number } };
    expect(out.summary).toMatchObject({ cases: 15, passed: 15, errors: 0 });
    // 15 requests against 2 per 2-second window from one process cannot all go through unrefused.
    expect(res.stderr).toContain('rate limited (HTTP 429)');
  });

  it('--retry-wait 0 turns the wait off: the same overload fails with exit 5', async () => {
    const cases = Array.from({ length: 6 }, (_, i) => JSON.stringify({ code: `y = ${i}` })).join('\n');
    const res = await runCli(['evaluate', '--batch', '-', '--num-evals', '1', '--concurrency', '6', '--retry-wait', '0', '--url', ctx.server.url], { input: cases });
    expect(res.code).toBe(5);
    expect(res.stderr).toContain('rate limit exceeded');
    // Nothing was waited for, and the hint does not pretend otherwise.
    expect(res.stderr).not.toContain('waiting');
    expect(res.stderr).toContain('hint: the CLI did not wait (--retry-wait 0)');
    expect(res.stderr).not.toContain('the CLI waited');
  });

  it('a shell loop of learns over the per-IP limit completes', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await runCli(['learn', '--task', `loop task number ${i}`, '--code', `print(${i})`, '--eval-score', '7', '--url', ctx.server.url]);
      expect(res.stderr.split('\n').filter((l) => l && !l.startsWith('rate limited (HTTP 429): waiting'))).toEqual([]);
      expect(res.code).toBe(0);
    }
  });

  it('recall --batch waits out the limits like every command: all lines answered, one stderr line per wait', async () => {
    // 500 lines are 5 batch requests (100 lines each), against 2 expensive requests per window.
    const tasks = Array.from({ length: 500 }, (_, i) => `batch task number ${i}`).join('\n');
    const res = await runCli(['recall', '--batch', '-', '--concurrency', '2', '--url', ctx.server.url], { input: tasks });
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as { line: number; result?: unknown });
    expect(lines.map((l) => l.line)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(lines.every((l) => l.result !== undefined)).toBe(true);
    expect(res.stderr).toMatch(/^rate limited \(HTTP 429\): waiting \d+\.\d s before retry \d+ of POST \/v1\/recall\/batch$/m);
  });
});
