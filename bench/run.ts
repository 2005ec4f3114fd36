import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { RELAXED_SIMD_FLAG } from '../src/adapters/storage/json/engine/int8-kernel.js';
import { parseArgs, USAGE, UsageError, type BenchOptions } from './args.js';
import { measureEmbeddings } from './embedding.js';
import { parseHttpArgs, HTTP_USAGE } from './http/options.js';
import { runHttpBench } from './http/run.js';
import { runDedupBench } from './dedup.js';
import { runStorageDiffBench } from './storage-diff.js';
import { runExportBench } from './export.js';
import { runCliBench } from './cli.js';
import { runBatchBench } from './batch.js';
import { runRecallQualityBench } from './recall-quality/run.js';
import { runRecallCpuBench } from './recall-cpu.js';
import { runAgentLoopBench } from './agent-loop/run.js';
import { runPgStatementsBench } from './pg-statements.js';
import { embeddingSection, sizesSection } from './report.js';
import { measureSize, type SizeJob, type SizeResult } from './scenario.js';
import { STORAGE_FACTORIES } from './storages.js';

/**
 * `npm run bench`: learn throughput, recall latency (embedding cached and uncached), memory
 * and local embedding latency for synthetic stores of several sizes. Each size runs in a
 * child process of its own, so its memory figures are not inflated by the previous size.
 */
const CHILD_FLAG = '--child';
const RESULT_PREFIX = 'BENCH_RESULT ';

async function runChild(jobJson: string): Promise<void> {
  const job = JSON.parse(jobJson) as SizeJob;
  const result = await measureSize(job);
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

/** Runs one size in a fresh node process (with --expose-gc) and reads its result line. */
function measureInChild(job: SizeJob): Promise<SizeResult> {
  return new Promise((resolve, reject) => {
    const script = fileURLToPath(import.meta.url);
    // Node 20's relaxed SIMD flag, when the bench was started with it, reaches the measuring process too.
    const relaxed = process.execArgv.filter((a) => a === RELAXED_SIMD_FLAG);
    const child = spawn(process.execPath, [...relaxed, '--expose-gc', script, CHILD_FLAG, JSON.stringify(job)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => { stdout += chunk; });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
      if (code !== 0 || !line) {
        reject(new Error(`size ${job.size}: measuring process exited with code ${code}`));
        return;
      }
      resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as SizeResult);
    });
  });
}

async function runBench(options: BenchOptions): Promise<void> {
  const unknown = options.storages.find((name) => !STORAGE_FACTORIES[name]);
  if (unknown) {
    throw new UsageError(`unknown storage "${unknown}" (available: ${Object.keys(STORAGE_FACTORIES).join(', ')})`);
  }
  if (options.export) return runExportBench(options.storages, options.sizes);
  if (!existsSync(options.modelPath)) {
    throw new UsageError(`embedding model folder not found: ${options.modelPath} (pass --model PATH)`);
  }
  if (options.dedup) return runDedupBench(options.modelPath);
  if (options.storageDiff) return runStorageDiffBench(options.modelPath);
  const started = performance.now();
  const cpu = cpus();
  const header = [
    'Agent memory service benchmark',
    `node ${process.version}, ${cpu.length} CPU(s) ${cpu[0]?.model ?? ''}`.trim(),
    `storage: ${options.storages.join(', ')}; embedder: local, offline model ${options.modelPath}`,
    `synthetic data: seed ${options.seed}; ${options.queries} recall queries per size`,
  ];
  process.stderr.write('measuring local embedding latency...\n');
  const embedding = await measureEmbeddings(options.modelPath, options.onnxModelPath, options.seed);
  if (options.embeddingsOnly) {
    console.log([...header.filter((line) => !/^(storage|synthetic data):/.test(line)), '', embeddingSection(embedding)].join('\n'));
    return;
  }

  const results: SizeResult[] = [];
  for (const storage of options.storages) {
    for (const size of options.sizes) {
      process.stderr.write(`measuring ${size.toLocaleString('en-US')} patterns on ${storage}...\n`);
      results.push(await measureInChild({ size, storage, ...pick(options) }));
    }
  }
  const stores = [...new Set(results.map((r) => r.storageLabel.replace(/temp dir \S+/, 'a temp dir per size')))];
  console.log(
    [
      ...header,
      ...stores.map((label) => `store: ${label}`),
      '',
      embeddingSection(embedding),
      '',
      sizesSection(results),
      '',
      `total ${((performance.now() - started) / 1000).toFixed(0)} s`,
    ].join('\n'),
  );
}

function pick(o: BenchOptions): Omit<SizeJob, 'size' | 'storage'> {
  const { queries, learnFillLimit, learnSample, modelPath, seed, importCount } = o;
  return { queries, learnFillLimit, learnSample, modelPath, seed, importCount };
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === CHILD_FLAG) {
    await runChild(argv[1]);
    return 0;
  }
  if (argv.includes('--http')) return httpMain(argv.filter((a) => a !== '--http'));
  let options: BenchOptions | 'help';
  try {
    // --recall-quality: ranking and tier quality on labelled sets (bench/recall-quality/).
    if (argv.includes('--recall-quality')) {
      await runRecallQualityBench(argv);
      return 0;
    }
    // --agent-loop: an agent that reuses recall's top match, with and without outcome ranking (bench/agent-loop/).
    if (argv.includes('--agent-loop')) {
      await runAgentLoopBench(argv);
      return 0;
    }
    // --recall-cpu: CPU per recall, hybrid vs cosine ranking, with the hybrid phases (bench/recall-cpu.ts).
    if (argv.includes('--recall-cpu')) {
      await runRecallCpuBench(argv);
      return 0;
    }
    // --pg-statements: PostgreSQL's search statement, hybrid vs cosine ranking, interleaved (bench/pg-statements.ts).
    if (argv.includes('--pg-statements')) {
      await runPgStatementsBench(argv);
      return 0;
    }
    // --cli measures the command line's start-up instead (bench/cli.ts).
    if (argv.includes('--cli')) {
      await runCliBench(argv);
      return 0;
    }
    // --batch: N recalls through one `recall --batch` against N processes (bench/batch.ts).
    if (argv.includes('--batch')) {
      await runBatchBench(argv);
      return 0;
    }
    options = parseArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${USAGE}\n`);
      return 2;
    }
    throw err;
  }
  if (options === 'help') {
    console.log(USAGE);
    return 0;
  }
  try {
    await runBench(options);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 2;
  }
  return 0;
}

/** `--http`: the server under concurrent load (bench/http/). */
async function httpMain(argv: string[]): Promise<number> {
  try {
    const options = parseHttpArgs(argv);
    if (options === 'help') {
      console.log(HTTP_USAGE);
      return 0;
    }
    if (!existsSync(options.modelPath)) throw new UsageError(`embedding model folder not found: ${options.modelPath} (pass --model PATH)`);
    return await runHttpBench(options);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${HTTP_USAGE}\n`);
    return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    process.stderr.write(`benchmark failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
