import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { repoRoot, UsageError } from './args.js';

/**
 * `npm run bench -- --cli [--runs N] [--model PATH]`: whole-process wall time of the CLI, the
 * way a shell loop or a git hook pays it, as a ratio to `node -e 0` on the same machine.
 * The three commands are run interleaved (baseline, version, recall, baseline, …) so a load
 * change on a shared machine hits all of them alike; each figure is the median of N runs.
 */
export const CLI_USAGE = `usage: npm run bench -- --cli [--runs 15] [--model PATH]
  --runs N      runs per command (median reported; default 15)
  --model PATH  embedding model folder of the recall server (default: the bundled model)`;

interface CliBenchOptions {
  runs: number;
  /** null: the server's default, the bundled model. */
  modelPath: string | null;
}

function parseCliArgs(argv: string[]): CliBenchOptions {
  const options: CliBenchOptions = { runs: 15, modelPath: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--cli') continue;
    const value = argv[++i];
    if (flag === '--runs') {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 3) throw new UsageError('--runs needs a whole number of at least 3');
      options.runs = n;
    } else if (flag === '--model') {
      if (!value) throw new UsageError('--model needs a folder');
      options.modelPath = value;
    } else {
      throw new UsageError(`unknown option "${flag}" with --cli\n${CLI_USAGE}`);
    }
  }
  return options;
}

/** The parent's environment without any SERVICE_* setting, plus `extra`. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('SERVICE_')) env[name] = value;
  return { ...env, ...extra };
}

function timeOnce(args: string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const res = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - started;
  if (res.status !== 0) throw new Error(`node ${args.join(' ')} exited ${res.status}: ${res.stderr.toString()}`);
  return ms;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Starts `service serve --port 0` on a fresh JSON data path; resolves with its URL. */
export function startServer(bin: string, env: NodeJS.ProcessEnv): Promise<{ url: string; stop(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const exited = new Promise<void>((done) => child.on('close', () => done()));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1], stop: async () => { child.kill('SIGTERM'); await exited; } });
    });
    child.on('close', (code) => reject(new Error(`server exited (${code}) before listening:\n${err}`)));
  });
}

export async function runCliBench(argv: string[]): Promise<void> {
  const options = parseCliArgs(argv);
  const root = repoRoot();
  const bin = join(root, 'bin', 'service.js');
  const dataPath = mkdtempSync(join(tmpdir(), 'bench-cli-'));
  const serverEnv = cleanEnv({
    SERVICE_DATA_PATH: dataPath,
    SERVICE_LOCAL_EMBEDDINGS: '1',
    ...(options.modelPath === null ? {} : { SERVICE_EMBEDDING_MODEL_PATH: options.modelPath }),
    SERVICE_LLM_PROVIDER: 'none',
    SERVICE_LOG_LEVEL: 'warn',
    SERVICE_RATE_LIMIT_DEFAULT: '1000000',
    SERVICE_RATE_LIMIT_PER_KEY: '1000000',
  });
  const server = await startServer(bin, serverEnv);
  try {
    const clientEnv = cleanEnv({ SERVICE_URL: server.url });
    for (const task of ['parse a CSV file into records', 'resize uploaded images', 'retry failed HTTP calls with backoff']) {
      timeOnce([bin, 'learn', '--task', task, '--code', `// ${task}`, '--eval-score', '8'], clientEnv);
    }
    const commands: { label: string; args: string[] }[] = [
      { label: 'node -e 0', args: ['-e', '0'] },
      { label: 'service --version', args: [bin, '--version'] },
      { label: 'service recall "task"', args: [bin, 'recall', 'parse a CSV file', '--readonly'] },
    ];
    // One warm-up round fills the OS file cache, then the measured rounds interleave.
    for (const c of commands) timeOnce(c.args, clientEnv);
    const samples = commands.map(() => [] as number[]);
    for (let round = 0; round < options.runs; round++) {
      commands.forEach((c, i) => samples[i].push(timeOnce(c.args, clientEnv)));
    }
    const base = median(samples[0]);
    process.stdout.write(`CLI start-up: whole-process wall time, median of ${options.runs} interleaved runs\n`);
    process.stdout.write(`${'command'.padEnd(26)}${'median ms'.padStart(10)}${'ratio'.padStart(8)}\n`);
    commands.forEach((c, i) => {
      const m = median(samples[i]);
      process.stdout.write(`${c.label.padEnd(26)}${m.toFixed(1).padStart(10)}${`${(m / base).toFixed(2)}x`.padStart(8)}\n`);
    });
  } finally {
    await server.stop();
    rmSync(dataPath, { recursive: true, force: true });
  }
}
