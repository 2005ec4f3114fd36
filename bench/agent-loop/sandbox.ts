import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The agent-loop benchmark's test runner: the asked problem's tests against the code a recall
 * returned, in a sandboxed `python3 -I` child. Each run gets an empty temporary directory as
 * its working directory, CPU-time, address-space and file-size limits (`ulimit` in a `sh`
 * wrapper, inherited by python), a wall-clock timeout, and no environment beyond PATH. At most
 * `parallel` runs at a time; verdicts are cached per (code, problem), so the same reuse always
 * gets the same verdict and costs one run.
 */

export interface TestProblem {
  id: string;
  tests: string[];
  test_imports: string[];
}

export interface Verdict {
  passed: boolean;
  /** Whether the first test (after any set-up line) passed: near-miss mutants must pass it. */
  first_passed: boolean;
  /** The first failing test and why (null when passed): the outcome's detail. */
  detail: string | null;
}

export interface SandboxLimits {
  cpuSeconds: number;
  /** Address space, KiB. */
  memoryKiB: number;
  /** Largest file the child may write, KiB. */
  fileKiB: number;
  wallMs: number;
  parallel: number;
}

export const DEFAULT_LIMITS: SandboxLimits = { cpuSeconds: 5, memoryKiB: 1_048_576, fileKiB: 1_024, wallMs: 10_000, parallel: 2 };

/**
 * The harness python runs (read from stdin): executes the imports and the code in a fresh
 * namespace with stdout silenced, then each test line; set-up lines (not `assert`) run as
 * code. Prints one JSON line after a marker. Any exception, SystemExit included, is a failure.
 */
const HARNESS = String.raw`
import sys, json, io
payload = json.loads(sys.stdin.read())
marker = payload["marker"]
real_stdout = sys.stdout
result = {"passed": False, "first_passed": False, "detail": None}
def describe(line, err):
    kind = type(err).__name__
    text = str(err)[:300]
    return line[:300] + " -> " + kind + (": " + text if text else "")
g = {"__name__": "solution"}
sys.stdout = io.StringIO()
try:
    try:
        for line in payload["imports"]:
            exec(line, g)
        exec(compile(payload["code"], "solution.py", "exec"), g)
    except BaseException as err:
        result["detail"] = describe("(loading the code)", err)
    else:
        seen_assert = False
        ok = True
        for line in payload["tests"]:
            is_assert = line.lstrip().startswith("assert")
            try:
                exec(line, g)
            except BaseException as err:
                ok = False
                result["detail"] = describe(line, err)
                break
            if is_assert and not seen_assert:
                result["first_passed"] = True
            if is_assert:
                seen_assert = True
        result["passed"] = ok
finally:
    sys.stdout = real_stdout
real_stdout.write("\n" + marker + json.dumps(result) + "\n")
real_stdout.flush()
`;

const MARKER = 'AGENT_LOOP_VERDICT ';

/** The python interpreter itself (a version manager's shim would cost a shell and more per run). */
export function resolvePython(): string {
  try {
    return execFileSync('python3', ['-I', '-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim() || 'python3';
  } catch {
    return 'python3';
  }
}

export class Sandbox {
  private readonly cache = new Map<string, Promise<Verdict>>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Runs actually started (cache misses). */
  runs = 0;

  constructor(
    private readonly python = resolvePython(),
    private readonly limits: SandboxLimits = DEFAULT_LIMITS,
  ) {}

  /** The verdict of `code` on `problem`'s tests (cached per code and problem). */
  verdict(code: string, problem: TestProblem): Promise<Verdict> {
    const key = `${problem.id}\u0000${createHash('sha256').update(code).digest('hex')}`;
    let v = this.cache.get(key);
    if (!v) {
      v = this.slot(() => this.run(code, problem));
      this.cache.set(key, v);
    }
    return v;
  }

  private async slot<T>(work: () => Promise<T>): Promise<T> {
    while (this.running >= this.limits.parallel) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private async run(code: string, problem: TestProblem): Promise<Verdict> {
    this.runs++;
    const dir = await mkdtemp(join(tmpdir(), 'agent-loop-run-'));
    try {
      const { cpuSeconds, memoryKiB, fileKiB, wallMs } = this.limits;
      // ulimit in the shell, then exec: python inherits the limits and nothing else is left running.
      const script = `ulimit -t ${cpuSeconds} && ulimit -v ${memoryKiB} && ulimit -f ${fileKiB} && exec "$0" -I -`;
      const child = spawn('/bin/sh', ['-c', script, this.python], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, PYTHONHASHSEED: '0' },
        stdio: ['pipe', 'pipe', 'ignore'],
        detached: true,
      });
      const payload = JSON.stringify({ marker: MARKER, code, tests: problem.tests, imports: problem.test_imports });
      let out = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        if (out.length < 1_000_000) out += chunk;
      });
      child.stdin.on('error', () => { /* a child that exits before reading all its input */ });
      child.stdin.end(payloadProgram(payload));
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        // The whole process group: python and anything it started.
        try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone already */ }
      }, wallMs);
      await new Promise<void>((resolve) => child.on('close', () => resolve()));
      clearTimeout(timer);
      if (timedOut) return { passed: false, first_passed: false, detail: `timed out after ${wallMs} ms` };
      const line = out.split('\n').find((l) => l.startsWith(MARKER));
      if (!line) return { passed: false, first_passed: false, detail: 'the run ended without a verdict (crashed, killed or over a limit)' };
      return JSON.parse(line.slice(MARKER.length)) as Verdict;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** The program python reads from stdin: the harness with its payload appended as a literal. */
function payloadProgram(payload: string): string {
  // The harness reads its payload from stdin; python reads the program from stdin too, so the
  // payload travels inside the program instead, as a JSON string literal.
  return HARNESS.replace('json.loads(sys.stdin.read())', `json.loads(${JSON.stringify(payload)})`);
}
