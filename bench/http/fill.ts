import { createEmbedder } from '../../src/adapters/embeddings/index.js';
import { loadConfig } from '../../src/config/index.js';
import type { PatternRecord, Scope } from '../../src/core/types.js';
import { noopInstruments, silentLogger } from '../../src/ports/observability.js';
import { newId } from '../../src/services/ids.js';
import type { Storage } from '../../src/ports/storage.js';
import type { BenchStorage } from '../storages.js';
import { seededRandom, syntheticRuns, templatedTask, type SyntheticRun, type TaskSource } from '../synthetic.js';

/** The scope a dev-mode server serves when a request names no project. */
export const DEV_SCOPE: Scope = { tenant_id: 'default', project_id: 'default' };

/** Real embeddings are computed for this many tasks; the rest of the store spreads around them. */
const BASE_VECTORS = 1_000;
/**
 * Per-dimension noise added to a base vector: for 384 dimensions the copy keeps a cosine
 * similarity of about 0.9 with its base, so queries meet the usual mix of adapt and fresh tiers.
 */
const NOISE = 0.025;
const EMBED_BATCH = 64;
/** Inserts in flight at once (they share commits, as an import would). */
const WRITE_BATCH = 256;

/**
 * Synthetic vectors for `count` patterns: real embeddings of the first BASE_VECTORS tasks (so
 * recall queries, embedded by the server, land among them), then seeded noisy copies. Embedding
 * 100k tasks one by one would take minutes on a busy box; the load is what is measured here.
 */
export async function syntheticVectors(modelPath: string, tasks: string[], seed: number): Promise<Float32Array[]> {
  const next = await syntheticVectorSource(modelPath, tasks.slice(0, BASE_VECTORS), seed);
  return tasks.map(() => next());
}

/** Real embeddings of the given texts with the model at `modelPath`. */
export async function embedTexts(modelPath: string, texts: string[]): Promise<Float32Array[]> {
  const embedder = await openEmbedder(modelPath);
  try {
    return await embedder.embed(texts);
  } finally {
    await embedder.close();
  }
}

/** The offline model at `modelPath`, embedding any number of texts in batches. */
export async function openEmbedder(modelPath: string): Promise<{ embed(texts: string[]): Promise<Float32Array[]>; close(): Promise<void> }> {
  const config = loadConfig({ SERVICE_LOCAL_EMBEDDINGS: 'true', SERVICE_EMBEDDING_MODEL_PATH: modelPath, SERVICE_LLM_PROVIDER: 'none' });
  const embedder = await createEmbedder(config, { logger: silentLogger, instruments: noopInstruments });
  return {
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += EMBED_BATCH) out.push(...(await embedder.embed(texts.slice(i, i + EMBED_BATCH))));
      return out;
    },
    close: async () => { await embedder.close(); },
  };
}

/**
 * The vectors of syntheticVectors one at a time, in the same order: the base tasks'
 * embeddings first, then seeded noisy copies (a million rows need not be held at once).
 */
export async function syntheticVectorSource(modelPath: string, baseTasks: string[], seed: number): Promise<() => Float32Array> {
  const base = await embedTexts(modelPath, baseTasks.slice(0, BASE_VECTORS));
  const random = seededRandom(seed);
  // Box-Muller: normal noise from the uniform generator.
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  let i = 0;
  return () => {
    const at = i++;
    if (at < base.length) return base[at];
    const from = base[at % base.length];
    const v = new Float32Array(from.length);
    let norm = 0;
    for (let d = 0; d < v.length; d++) {
      v[d] = from[d] + NOISE * normal();
      norm += v[d] * v[d];
    }
    norm = Math.sqrt(norm);
    for (let d = 0; d < v.length; d++) v[d] /= norm;
    return v;
  };
}

/** Writes `size` synthetic patterns (and their first eval) into the dev scope of `store`. */
export async function fillStore(store: BenchStorage, size: number, modelPath: string, seed: number, taskFrom: TaskSource = templatedTask): Promise<void> {
  const runs = syntheticRuns(seed, size, taskFrom);
  const vectors = await syntheticVectors(modelPath, runs.map((r) => r.task), seed);
  const bulkLoad = store.bulkLoad ?? ((fill: (storage: Storage) => Promise<void>) => fill(store.storage));
  await bulkLoad((storage) => writeAll(storage, runs, vectors));
}

async function writeAll(storage: Storage, runs: SyntheticRun[], vectors: Float32Array[]): Promise<void> {
  for (let offset = 0; offset < runs.length; offset += WRITE_BATCH) {
    const batch = runs.slice(offset, offset + WRITE_BATCH);
    await Promise.all(batch.map(async (run, i) => {
      const at = new Date();
      const record: PatternRecord = {
        id: newId(at), task: run.task, code: run.code, output: run.output,
        eval_score: run.eval_score, success_score: run.eval_score, reuse_count: 0, run_id: null,
        classification: 'internal', source: 'api', author: null, expires_at: null, redacted: false,
        created_at: at.toISOString(), updated_at: at.toISOString(), last_aged_at: null,
      };
      await storage.patterns.insert(DEV_SCOPE, record, vectors[offset + i]);
      await storage.evals.add(DEV_SCOPE, record.id, record.eval_score, record.created_at);
    }));
  }
}
