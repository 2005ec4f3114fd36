import { createEmbedder, type CachedEmbedder } from '../src/adapters/embeddings/index.js';
import { loadConfig } from '../src/config/index.js';
import { percentile } from '../src/core/stats.js';
import type { PatternRecord, Scope } from '../src/core/types.js';
import { systemClock } from '../src/ports/clock.js';
import { noopInstruments, silentLogger } from '../src/ports/observability.js';
import { systemContext } from '../src/services/audit.js';
import type { ServiceDeps } from '../src/services/deps.js';
import { newId } from '../src/services/ids.js';
import { learn } from '../src/services/learn.js';
import { recall } from '../src/services/recall.js';
import { importRecords } from '../src/services/import-export.js';
import { STORAGE_FACTORIES } from './storages.js';
import { syntheticQueries, syntheticRuns, type SyntheticRun } from './synthetic.js';

/** What one store size is measured with (runs in its own process, see run.ts). */
export interface SizeJob {
  size: number;
  storage: string;
  queries: number;
  learnFillLimit: number;
  learnSample: number;
  modelPath: string;
  seed: number;
  /** Records imported through the import service into a fresh project (0: skip). */
  importCount: number;
}

export interface Latency {
  p50: number;
  p95: number;
}

export interface SizeResult {
  size: number;
  storageLabel: string;
  /** How the store was filled: every run through the learn service, or direct inserts. */
  fill: { method: 'learn' | 'direct'; seconds: number; perSecond: number };
  /** Learn service throughput (patterns/s) and how many learns it was measured on. */
  learn: { count: number; perSecond: number };
  recallUncached: Latency;
  recallCached: Latency;
  /** GET recall (no side effects, so no writes), embedding cached: search and ranking alone. */
  recallReadonly: Latency;
  /** Embedding-cache hits seen during the cached calls (should equal `queries`). */
  cachedPassHits: number;
  queries: number;
  patternsStored: number;
  /** Import of fresh records into an empty project of the filled store (null: skipped). */
  import: { records: number; seconds: number; perSecond: number } | null;
  rssMB: number;
  heapUsedMB: number;
  storeMB: number | null;
}

const SCOPE: Scope = { tenant_id: 'bench', project_id: 'default' };
/** Imports go to a project of their own, so they never merge into the measured store. */
const IMPORT_SCOPE: Scope = { tenant_id: 'bench', project_id: 'import' };
const EMBED_BATCH = 64;
const WARMUP_QUERIES = 10;

function log(message: string): void {
  process.stderr.write(`  ${message}\n`);
}

function seconds(since: number): number {
  return (performance.now() - since) / 1000;
}

async function learnAll(deps: ServiceDeps, runs: SyntheticRun[], label: string): Promise<number> {
  const started = performance.now();
  const step = Math.max(1, Math.floor(runs.length / 10));
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i];
    await learn(deps, SCOPE, { ...run, classification: 'internal', source: 'api' }, systemContext);
    if ((i + 1) % step === 0) log(`${label}: ${i + 1}/${runs.length}`);
  }
  return seconds(started);
}

/** Bulk fill for large sizes: vectors embedded in batches, then inserted as learn would store them. */
async function insertDirectly(deps: ServiceDeps, runs: SyntheticRun[]): Promise<number> {
  const started = performance.now();
  const step = Math.max(EMBED_BATCH, Math.floor(runs.length / 10 / EMBED_BATCH) * EMBED_BATCH);
  for (let offset = 0; offset < runs.length; offset += EMBED_BATCH) {
    const batch = runs.slice(offset, offset + EMBED_BATCH);
    const vectors = await deps.embedder.embed(batch.map((r) => r.task));
    const records = batch.map((run): PatternRecord => {
      const at = deps.clock.now();
      return {
        id: newId(at), task: run.task, code: run.code, output: run.output,
        eval_score: run.eval_score, success_score: run.eval_score, reuse_count: 0, run_id: null,
        classification: 'internal', source: 'api', author: null, expires_at: null, redacted: false,
        created_at: at.toISOString(), updated_at: at.toISOString(), last_aged_at: null,
      };
    });
    // Concurrent writes share the store's commits (one sync per batch, not per pattern), the
    // way a bulk import would write; learn, by contrast, is measured one call at a time.
    await Promise.all(records.map(async (record, i) => {
      await deps.storage.patterns.insert(SCOPE, record, vectors[i]);
      await deps.storage.evals.add(SCOPE, record.id, record.eval_score, record.created_at);
    }));
    if ((offset + batch.length) % step === 0) log(`direct insert: ${offset + batch.length}/${runs.length}`);
  }
  return seconds(started);
}

function latency(ms: number[]): Latency {
  return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
}

interface RecallTimings {
  uncached: Latency;
  cached: Latency;
  readonly: Latency;
  /** Embedding-cache hits during the cached calls. */
  cachedHits: number;
}

/**
 * Each query is timed three times in a row: first seen (embedding computed), again (embedding
 * from the LRU), and read-only. Interleaving keeps the three series under the same machine
 * load, which matters on a shared box.
 */
async function timeRecalls(deps: ServiceDeps, embedder: CachedEmbedder, queries: string[]): Promise<RecallTimings> {
  const once = async (task: string, readonly: boolean): Promise<number> => {
    const started = performance.now();
    await recall(deps, SCOPE, { task, limit: 5, offset: 0, deduplicate: true, eval_weighted: true, recency_weight: 0, recency_half_life_days: 30 }, { readonly });
    return performance.now() - started;
  };
  const uncached: number[] = [];
  const cached: number[] = [];
  const readonly: number[] = [];
  let cachedHits = 0;
  for (const task of queries) {
    uncached.push(await once(task, false));
    const hitsBefore = embedder.stats().hits;
    cached.push(await once(task, false));
    cachedHits += embedder.stats().hits - hitsBefore;
    readonly.push(await once(task, true));
  }
  return { uncached: latency(uncached), cached: latency(cached), readonly: latency(readonly), cachedHits };
}

/**
 * One `POST /v1/import`-sized call through the import service (batch embedding, redaction,
 * inserts, eval records) into an empty project of the same store: what a restore costs.
 */
async function timeImport(deps: ServiceDeps, runs: SyntheticRun[]): Promise<SizeResult['import']> {
  if (runs.length === 0) return null;
  log(`import: ${runs.length} records`);
  const records = runs.map((r) => ({ task: r.task, code: r.code, output: r.output, eval_score: r.eval_score }));
  const started = performance.now();
  const result = await importRecords(deps, IMPORT_SCOPE, { records, overwrite: false }, systemContext);
  const s = seconds(started);
  return { records: result.imported, seconds: s, perSecond: result.imported / s };
}

function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

export async function measureSize(job: SizeJob): Promise<SizeResult> {
  const factory = STORAGE_FACTORIES[job.storage];
  if (!factory) throw new Error(`unknown storage "${job.storage}" (known: ${Object.keys(STORAGE_FACTORIES).join(', ')})`);
  const config = loadConfig({
    SERVICE_LOCAL_EMBEDDINGS: 'true',
    SERVICE_EMBEDDING_MODEL_PATH: job.modelPath,
    // No SERVICE_STORAGE: the factory opens the store (postgres would otherwise demand a URL here).
    SERVICE_LLM_PROVIDER: 'none',
  });
  const embedder: CachedEmbedder = await createEmbedder(config, { logger: silentLogger, instruments: noopInstruments });
  // Fail loudly here rather than in the middle of a fill (createEmbedder only logs a failed load).
  await embedder.embed(['model check']);
  const bench = await factory();
  let closed = false;
  try {
    const deps: ServiceDeps = {
      config: { ...config, storage: { ...config.storage, kind: bench.storage.kind } }, storage: bench.storage, embedder, llm: null, clock: systemClock, logger: silentLogger, instruments: noopInstruments, keyStore: null,
    };
    const viaLearn = job.size <= job.learnFillLimit;
    const runs = syntheticRuns(job.seed, job.size + (viaLearn ? 0 : job.learnSample));
    const fillRuns = runs.slice(0, job.size);

    let fill: SizeResult['fill'];
    let learnResult: SizeResult['learn'];
    if (viaLearn) {
      const s = await learnAll(deps, fillRuns, 'learn');
      fill = { method: 'learn', seconds: s, perSecond: job.size / s };
      learnResult = { count: job.size, perSecond: job.size / s };
    } else {
      const s = await insertDirectly(deps, fillRuns);
      fill = { method: 'direct', seconds: s, perSecond: job.size / s };
      const sample = runs.slice(job.size);
      const ls = await learnAll(deps, sample, 'learn sample');
      learnResult = { count: sample.length, perSecond: sample.length / ls };
    }

    const stored = new Set(runs.map((r) => r.task));
    const warmup = syntheticQueries(job.seed + 2, WARMUP_QUERIES, stored);
    const queries = syntheticQueries(job.seed + 1, job.queries, new Set([...stored, ...warmup]));
    log(`recall: ${queries.length} queries, each uncached, cached and read-only`);
    await timeRecalls(deps, embedder, warmup);
    const timings = await timeRecalls(deps, embedder, queries);
    const imported = await timeImport(deps, syntheticRuns(job.seed + 3, job.importCount));

    collectGarbage();
    const memory = process.memoryUsage();
    const patternsStored = await bench.storage.patterns.count(SCOPE);
    await bench.close();
    closed = true;
    const storeBytes = await bench.sizeBytes();
    return {
      size: job.size,
      storageLabel: bench.label,
      fill,
      learn: learnResult,
      recallUncached: timings.uncached,
      recallCached: timings.cached,
      recallReadonly: timings.readonly,
      cachedPassHits: timings.cachedHits,
      queries: queries.length,
      patternsStored,
      import: imported,
      rssMB: memory.rss / 2 ** 20,
      heapUsedMB: memory.heapUsed / 2 ** 20,
      storeMB: storeBytes === null ? null : storeBytes / 2 ** 20,
    };
  } finally {
    if (!closed) await bench.close().catch(() => undefined);
    await bench.remove();
    await embedder.close();
  }
}
