import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { repoRoot, UsageError } from './args.js';
import { cleanEnv, startServer } from './cli.js';
import { syntheticQueries, syntheticRuns } from './synthetic.js';

/**
 * `npm run bench -- --batch [--tasks 1000] [--concurrency 4] [--model PATH]`: N recall tasks
 * through one `service recall --batch` process against N separate `service recall` processes,
 * the way a shell loop runs them: whole-process wall time for all N, both against the same
 * server in the same run (the store is learned first, both read-only so neither changes it).
 */
export const BATCH_USAGE = `usage: npm run bench -- --batch [--tasks 1000] [--concurrency 4] [--model PATH]
  --tasks N        recall tasks measured each way (default 1000)
  --concurrency N  --concurrency of the batch run (default 4)
  --model PATH     embedding model folder of the server (default: the bundled model)`;

interface BatchBenchOptions {
  tasks: number;
  concurrency: number;
  modelPath: string | null;
}

function parseBatchArgs(argv: string[]): BatchBenchOptions {
  const options: BatchBenchOptions = { tasks: 1000, concurrency: 4, modelPath: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--batch') continue;
    const value = argv[++i];
    const whole = () => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} needs a positive whole number`);
      return n;
    };
    if (flag === '--tasks') options.tasks = whole();
    else if (flag === '--concurrency') options.concurrency = whole();
    else if (flag === '--model' && value) options.modelPath = value;
    else throw new UsageError(`unknown option "${flag}" with --batch\n${BATCH_USAGE}`);
  }
  return options;
}

/** Runs `service recall --batch -` with the tasks on stdin; resolves with the wall time. */
function timeBatch(bin: string, tasks: string[], concurrency: number, env: NodeJS.ProcessEnv): Promise<{ ms: number; answers: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, 'recall', '--batch', '-', '--concurrency', String(concurrency), '--limit', '3'], {
      env, stdio: ['pipe', 'pipe', 'pipe'],
    });
    let answers = 0;
    let errors = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => { answers += s.split('\n').length - 1; });
    child.stderr.setEncoding('utf8').on('data', (s: string) => { errors += s; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`recall --batch exited ${code}: ${errors}`));
      else resolve({ ms: performance.now() - started, answers });
    });
    child.stdin.end(`${tasks.join('\n')}\n`);
  });
}

/** N `service recall TASK` processes one after another, as `while read t; do service recall "$t"; done`. */
function timeSeparate(bin: string, tasks: string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  for (const task of tasks) {
    const res = spawnSync(process.execPath, [bin, 'recall', task, '--limit', '3'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    if (res.status !== 0) throw new Error(`service recall exited ${res.status}: ${res.stderr.toString()}`);
  }
  return performance.now() - started;
}

export async function runBatchBench(argv: string[]): Promise<void> {
  const options = parseBatchArgs(argv);
  const bin = join(repoRoot(), 'bin', 'service.js');
  const dataPath = mkdtempSync(join(tmpdir(), 'bench-batch-'));
  const server = await startServer(bin, cleanEnv({
    SERVICE_DATA_PATH: dataPath,
    ...(options.modelPath === null ? {} : { SERVICE_EMBEDDING_MODEL_PATH: options.modelPath }),
    SERVICE_LLM_PROVIDER: 'none',
    SERVICE_LOG_LEVEL: 'warn',
    // Both ways send the same N requests; the limits would only add the same waits to both.
    SERVICE_RATE_LIMIT_DEFAULT: '1000000',
    SERVICE_RATE_LIMIT_PER_KEY: '1000000',
  }));
  try {
    const env = cleanEnv({ SERVICE_URL: server.url });
    const runs = syntheticRuns(42, 200);
    const learned = runs.map((r) => JSON.stringify({ task: r.task, code: r.code, eval_score: r.eval_score })).join('\n');
    const learn = spawnSync(process.execPath, [bin, 'learn', '--batch', '-'], { env, input: learned });
    if (learn.status !== 0) throw new Error(`learn --batch exited ${learn.status}: ${learn.stderr.toString()}`);
    const tasks = syntheticQueries(7, options.tasks, new Set(runs.map((r) => r.task)));

    process.stderr.write(`recalling ${options.tasks} tasks through one --batch process...\n`);
    const batch = await timeBatch(bin, tasks, options.concurrency, env);
    if (batch.answers !== tasks.length) throw new Error(`recall --batch answered ${batch.answers} of ${tasks.length} lines`);
    process.stderr.write(`recalling ${options.tasks} tasks with one process each...\n`);
    const separate = timeSeparate(bin, tasks, env);

    const row = (label: string, ms: number) =>
      `${label.padEnd(40)}${(ms / 1000).toFixed(1).padStart(9)}${(ms / tasks.length).toFixed(1).padStart(12)}`;
    process.stdout.write([
      `recall of ${tasks.length} tasks: whole-process wall time (one server, same run; shared machine)`,
      `${'how'.padEnd(40)}${'total s'.padStart(9)}${'ms / task'.padStart(12)}`,
      row(`service recall --batch (concurrency ${options.concurrency})`, batch.ms),
      row(`${tasks.length} x service recall`, separate),
      `ratio: separate calls take ${(separate / batch.ms).toFixed(1)}x the time of one --batch run`,
      '',
    ].join('\n'));
  } finally {
    await server.stop();
    rmSync(dataPath, { recursive: true, force: true });
  }
}
