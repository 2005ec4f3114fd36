import { join, resolve } from 'node:path';
import { repoRoot, UsageError } from '../args.js';
import { corpusOption, type Corpus } from '../corpora.js';

/** The HTTP scenarios, in the order each connection level runs them. */
export const SCENARIOS = ['version', 'recall-post', 'recall-get', 'learn'] as const;
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** `npm run bench -- --http [options]`: fully described by its flags (no environment). */
export interface HttpBenchOptions {
  storages: ('json' | 'postgres')[];
  sizes: number[];
  connections: number[];
  scenarios: Scenario[];
  /** Seconds each (storage, size, connections, scenario) run lasts. */
  duration: number;
  /** `service serve --workers` for PostgreSQL (undefined: serve's default, one per core). */
  workers?: number;
  /** Folder for `--cpu-prof` profiles of the server (undefined: no profiling). */
  profileDir?: string;
  modelPath: string;
  /**
   * Other builds of the service (project folders with bin/ and dist/) served on the same filled
   * store right after this one, each in turn: before/after figures from one run.
   */
  compare: string[];
  /** SERVICE_LOG_LEVEL of the server (default info, what a deployment runs). */
  logLevel: string;
  /** Leave the filled PostgreSQL databases in place (named in the log) instead of dropping them. */
  keepDatabase: boolean;
  seed: number;
  /** Task texts of the store and the load: `templated` (word lists, the default) or `zipfian` (bench/corpora.ts). */
  corpus: Corpus;
  /** Serve this build and the --compare builds at the same time, each on a copy of the store (PostgreSQL; side-by-side.ts). */
  sideBySide: boolean;
  /** Rounds of every run in side-by-side mode. */
  rounds: number;
}


export const HTTP_USAGE = `usage: npm run bench -- --http [options]
  --storage json,postgres     storages to serve (default both)
  --sizes 10000               patterns filled before the load (default 10000; add 100000 for the large store)
  --connections 1,16,64       concurrent connections of the load generator (default 1,16,64)
  --scenarios LIST            any of ${SCENARIOS.join(',')} (default all)
  --duration 5                seconds per run (default 5)
  --workers N                 server processes for PostgreSQL (default: serve's, one per core);
                              JSON always runs one
  --cpu-prof DIR              start the server with --cpu-prof, profiles written to DIR
  --model PATH                offline embedding model (default: the bundled <repo>/models/use-lite-static-m2v,
                              what users get; pass a transformers.js/ONNX folder to measure that runtime)
  --compare DIR[,DIR]         also serve these builds of the service (project folders, built) on the
                              same store, one after the other: before/after in one run
  --log-level info            the server's SERVICE_LOG_LEVEL (default info, as deployed)
  --keep-database             leave each filled PostgreSQL database in place (its URL is logged) for
                              measuring by hand afterwards; drop it with DROP DATABASE when done
  --side-by-side              PostgreSQL: serve this build and the --compare builds at the same time, each on
                              its own copy of the filled database, and load them all at once; reports each
                              build's server + PostgreSQL CPU per request against this one's, per round
  --rounds 3                  rounds of every run with --side-by-side (the median difference is reported)
  --seed 42                   seed of the synthetic data
  --corpus templated          task texts: templated (word lists: every word in 4-10 % of the store, above the
                              keyword side's per-term cap at 10k, so no keyword candidates) or zipfian (English
                              words by Zipf's law, as sparse as real task text; bench/corpora.ts)`;

function positiveInt(flag: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} needs a positive whole number, got "${value ?? ''}"`);
  return n;
}

function list(flag: string, value: string | undefined): string[] {
  const items = (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`${flag} needs a comma-separated list`);
  return items;
}

function oneOfList<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T[] {
  return list(flag, value).map((item) => {
    if (!(allowed as readonly string[]).includes(item)) throw new UsageError(`${flag}: unknown "${item}" (allowed: ${allowed.join(', ')})`);
    return item as T;
  });
}

export function parseHttpArgs(argv: string[]): HttpBenchOptions | 'help' {
  const options: HttpBenchOptions = {
    storages: ['json', 'postgres'],
    sizes: [10_000],
    connections: [1, 16, 64],
    scenarios: [...SCENARIOS],
    duration: 5,
    modelPath: '',
    logLevel: 'info',
    compare: [],
    keepDatabase: false,
    seed: 42,
    corpus: 'templated',
    sideBySide: false,
    rounds: 3,
  };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    if (flag === '--keep-database' || flag === '--side-by-side') {
      // The flags without a value.
      if (flag === '--keep-database') options.keepDatabase = true;
      else options.sideBySide = true;
      i -= 1;
      continue;
    }
    const value = argv[i + 1];
    switch (flag) {
      case '--help':
      case '-h':
        return 'help';
      case '--storage': options.storages = oneOfList(flag, value, ['json', 'postgres'] as const); break;
      case '--sizes': options.sizes = list(flag, value).map((s) => positiveInt(flag, s)); break;
      case '--connections': options.connections = list(flag, value).map((s) => positiveInt(flag, s)); break;
      case '--scenarios': options.scenarios = oneOfList(flag, value, SCENARIOS); break;
      case '--duration': options.duration = positiveInt(flag, value); break;
      case '--workers': options.workers = positiveInt(flag, value); break;
      case '--cpu-prof':
        if (!value) throw new UsageError('--cpu-prof needs a folder');
        options.profileDir = resolve(value);
        break;
      case '--model':
        if (!value) throw new UsageError('--model needs a folder');
        options.modelPath = resolve(value);
        break;
      case '--seed': options.seed = positiveInt(flag, value); break;
      case '--rounds': options.rounds = positiveInt(flag, value); break;
      case '--corpus': options.corpus = corpusOption(value); break;
      case '--compare': options.compare = list(flag, value).map((dir) => resolve(dir)); break;
      case '--log-level': options.logLevel = oneOfList(flag, value, LOG_LEVELS)[0]; break;
      default:
        throw new UsageError(`unknown option "${flag}"`);
    }
  }
  if (options.sideBySide) {
    if (options.compare.length === 0) throw new UsageError('--side-by-side needs --compare DIR (the builds served beside this one)');
    if (options.storages.some((s) => s !== 'postgres')) throw new UsageError('--side-by-side needs --storage postgres (each build gets its own copy of the database)');
  }
  // The default is what a user runs: the bundled static model. ONNX is only ever measured when named.
  if (!options.modelPath) options.modelPath = join(repoRoot(), 'models', 'use-lite-static-m2v');
  return options;
}
