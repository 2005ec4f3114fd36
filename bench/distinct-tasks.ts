import type { PatternRecord, Scope } from '../src/core/types.js';
import type { Embedder } from '../src/ports/embedder.js';
import type { Storage } from '../src/ports/storage.js';
import { syntheticQueries, syntheticRuns } from './synthetic.js';

/**
 * A corpus where deduplicated recall keeps nearly every candidate: `count` distinct synthetic
 * tasks (bench/synthetic.ts), each embedded, written straight into storage. A deep page then
 * keeps thousands of survivors, each candidate compared with every one kept: the costly case
 * for dedup (`npm run bench -- --dedup`). Returns a query from the same vocabulary.
 */
export async function seedDistinctTasks(storage: Storage, embedder: Embedder, scope: Scope, count: number): Promise<string> {
  const runs = syntheticRuns(7, count);
  const at = new Date(Date.UTC(2025, 0, 1)).toISOString();
  const batch = 500;
  if (!storage.patterns.writeBatch) throw new Error('this storage has no writeBatch');
  for (let from = 0; from < count; from += batch) {
    const slice = runs.slice(from, from + batch);
    const vectors = await embedder.embed(slice.map((r) => r.task));
    const writes = slice.map((run, j) => {
      const i = from + j;
      const record: PatternRecord = {
        id: `dt${String(i).padStart(8, '0')}`, task: run.task, code: run.code, output: null, eval_score: run.eval_score,
        success_score: run.eval_score, reuse_count: 0, run_id: null, classification: 'internal', source: 'import', author: null,
        expires_at: null, redacted: false, created_at: at, updated_at: at, last_aged_at: null,
      };
      return { record, vector: vectors[j], replace: false };
    });
    await storage.patterns.writeBatch(scope, writes);
  }
  return syntheticQueries(8, 1, new Set(runs.map((r) => r.task)))[0];
}
