import { inBatches } from '../core/batches.js';
import type { PatternRecord, Scope } from '../core/types.js';
import { storableVector } from '../core/vector.js';
import type { ServiceDeps } from './deps.js';

/** Tasks embedded per call: large enough to amortise a model pass, small enough to stream. */
const BATCH_SIZE = 64;

/**
 * Re-embeds the task of every stored pattern, in every scope, with the current embedder,
 * then records the embedder's model and dimension as the store's embedding info. Needed
 * after a model change (the server refuses to start on a mismatch and names this command).
 */
export async function reindex(
  deps: ServiceDeps,
  onProgress?: (done: number, total: number) => void,
): Promise<{ patterns: number }> {
  const { storage, embedder, logger } = deps;
  const scopes = await storage.patterns.listScopes();
  let total = 0;
  for (const scope of scopes) total += await storage.patterns.count(scope);

  let done = 0;
  onProgress?.(done, total);
  const embedBatch = async (scope: Scope, batch: PatternRecord[]): Promise<void> => {
    const vectors = await embedder.embed(batch.map((p) => p.task));
    for (let i = 0; i < batch.length; i++) await storage.patterns.setVector(scope, batch[i].id, storableVector(vectors[i]));
    done += batch.length;
    // Patterns learned while reindexing can push `done` past the count taken at the start.
    onProgress?.(done, Math.max(total, done));
  };

  for (const scope of scopes) {
    for await (const batch of inBatches(storage.patterns.iterate(scope), BATCH_SIZE)) await embedBatch(scope, batch);
  }

  const info = embedder.info;
  await storage.meta.setEmbeddingInfo({ ...info });
  logger.info({ patterns: done, scopes: scopes.length, model: info.model, dimension: info.dimension }, 'reindex finished');
  return { patterns: done };
}
