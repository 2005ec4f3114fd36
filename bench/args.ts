import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Benchmark options from argv (no environment: the run is fully described by its flags). */
export interface BenchOptions {
  sizes: number[];
  /** Storages measured in this run, in order (postgres always comes with json as the reference). */
  storages: string[];
  /** Records imported through the import service per size and storage (0: skip). */
  importCount: number;
  /** Recall queries per size (each is timed uncached, then again cached). */
  queries: number;
  /** Sizes above this are filled by direct storage inserts instead of the learn service. */
  learnFillLimit: number;
  /** Learns timed through the service on top of a directly filled store. */
  learnSample: number;
  /** Offline embedding model folder (the bundled static model by default). */
  modelPath: string;
  /** The same table in the transformers.js layout, for the side-by-side embedding figures. */
  onnxModelPath: string | null;
  /** `--embeddings`: measure embedding latency only (no store sizes). */
  embeddingsOnly: boolean;
  seed: number;
  /** `--export`: only the NDJSON export benchmark (bench/export.ts). */
  export: boolean;
  /** `--dedup`: only the deduplicated-recall benchmark over near-identical and distinct patterns (bench/dedup.ts). */
  dedup: boolean;
  /** `--storage-diff`: only how often JSON and PostgreSQL answer a recall differently (bench/storage-diff.ts). */
  storageDiff: boolean;
}

export const USAGE = `usage: node dist/bench/run.js [options]   (--http: the HTTP load benchmark, see --http --help)
  --sizes 1000,10000,100000   store sizes to measure (default all three)
  --storage json              storage backends, comma-separated (bench/storages.ts); postgres is
                              always measured next to json in the same run, for comparison
  --import 10000              records imported through the import service per size (0: skip)
  --queries 200               recall queries per size, each timed uncached, cached and read-only
  --learn-fill-limit 10000    larger sizes are filled by direct inserts with pre-computed vectors
  --learn-sample 500          learns timed through the learn service on a directly filled store
  --model PATH                offline embedding model (default: the bundled <repo>/models/use-lite-static-m2v)
  --onnx-model PATH           the same table in the transformers.js layout, measured side by side
                              (default <repo>/test/fixtures/models/use-lite-static-wordpiece)
  --embeddings                embedding latency and model load only (both paths), no store sizes
  --seed 42                   seed of the synthetic data
  --export                    NDJSON export time and memory instead (default sizes 10000,100000; json and postgres)
  --dedup                     deduplicated recall over 10,000 near-identical and 12,000 distinct patterns,
                              deep pages next to the same pages without dedup, instead (json)
  --storage-diff              instead: how often JSON and PostgreSQL (HNSW) answer the same recall over
                              the same data differently, and the nearest rows the HNSW walk misses
  --cli [--runs N]            instead: CLI start-up time as a ratio to node -e 0 (bench/cli.ts)
  --batch [--tasks N]         instead: N recalls via one "recall --batch" vs N processes (bench/batch.ts)
  --recall-quality            instead: recall ranking and tier quality on CoNaLa and the calibration set,
                              before/after, with the per-request cost (bench/recall-quality/run.ts)
  --pg-statements [--corpus C] PostgreSQL's recall search statement, hybrid vs cosine ranking, one connection,
                              interleaved per query: stable ratios on a noisy machine (bench/pg-statements.ts)
  --agent-loop [--data FILE] [--seeds 1,2] [--rounds 4] ...
                              instead: an agent that reuses the top match and reports its tests' verdicts, first-try
                              pass rate with and without outcome ranking (bench/agent-loop/run.ts; --agent-loop --help)
  --recall-cpu [--patterns N] [--queries N] [--rounds N]
                              instead: CPU per recall through the service layer, hybrid vs cosine
                              ranking on one JSON store, and the hybrid phases (bench/recall-cpu.ts)
  --help`;

export class UsageError extends Error {}

function positiveInt(flag: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} needs a positive whole number, got "${value ?? ''}"`);
  return n;
}

export function parseArgs(argv: string[]): BenchOptions | 'help' {
  const options: BenchOptions = {
    sizes: [1_000, 10_000, 100_000],
    storages: ['json'],
    importCount: 10_000,
    queries: 200,
    learnFillLimit: 10_000,
    learnSample: 500,
    modelPath: '',
    onnxModelPath: null,
    embeddingsOnly: false,
    seed: 42,
    export: false,
    dedup: false,
    storageDiff: false,
  };
  const given = new Set<string>();
  let modelPath: string | null = null;
  let onnxModelPath: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    given.add(flag);
    switch (flag) {
      case '--export':
        options.export = true;
        continue;
      case '--dedup':
        options.dedup = true;
        continue;
      case '--storage-diff':
        options.storageDiff = true;
        continue;
      case '--help':
      case '-h':
        return 'help';
      case '--sizes':
        options.sizes = (value ?? '').split(',').filter(Boolean).map((s) => positiveInt('--sizes', s));
        if (options.sizes.length === 0) throw new UsageError('--sizes needs a comma-separated list, e.g. 1000,10000');
        break;
      case '--storage': {
        const names = (value ?? '').split(',').map((n) => n.trim()).filter(Boolean);
        if (names.length === 0) throw new UsageError('--storage needs a backend name');
        // PostgreSQL figures mean most next to the embedded default measured on the same box.
        options.storages = names.includes('postgres') && !names.includes('json') ? ['json', ...names] : names;
        break;
      }
      case '--import':
        options.importCount = value === '0' ? 0 : positiveInt(flag, value);
        break;
      case '--queries':
        options.queries = positiveInt(flag, value);
        break;
      case '--learn-fill-limit':
        options.learnFillLimit = positiveInt(flag, value);
        break;
      case '--learn-sample':
        options.learnSample = positiveInt(flag, value);
        break;
      case '--model':
        if (!value) throw new UsageError('--model needs a folder');
        modelPath = resolve(value);
        break;
      case '--onnx-model':
        if (!value) throw new UsageError('--onnx-model needs a folder');
        onnxModelPath = resolve(value);
        break;
      case '--embeddings':
        options.embeddingsOnly = true;
        continue;
      case '--seed':
        options.seed = positiveInt(flag, value);
        break;
      default:
        throw new UsageError(`unknown option "${flag}"`);
    }
    i++;
  }
  options.modelPath = modelPath ?? join(repoRoot(), 'models', 'use-lite-static-m2v');
  const fixture = join(repoRoot(), 'test', 'fixtures', 'models', 'use-lite-static-wordpiece');
  options.onnxModelPath = onnxModelPath ?? (existsSync(fixture) ? fixture : null);
  if (options.export && !given.has('--sizes')) options.sizes = [10_000, 100_000];
  if (options.export && !given.has('--storage')) options.storages = ['json', 'postgres'];
  return options;
}

/**
 * The project root: the nearest folder holding this project's package.json, looking up from
 * the compiled script first (dist/bench/run.js), then from the working directory (a build
 * compiled elsewhere but run from the project).
 */
export function repoRoot(): string {
  const starts = [dirname(fileURLToPath(import.meta.url)), process.cwd()];
  for (const start of starts) {
    for (let dir = start; ; dir = dirname(dir)) {
      const manifest = join(dir, 'package.json');
      if (existsSync(manifest) && isThisProject(manifest)) return dir;
      if (dirname(dir) === dir) break;
    }
  }
  throw new UsageError('cannot find the project root (package.json); pass --model PATH');
}

function isThisProject(manifest: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
    return pkg.name === 'agent-memory-service';
  } catch {
    return false;
  }
}
