import type { EmbeddingInfo } from './types.js';

/**
 * Model identities. A local model folder is known by its folder name, but one table can be
 * published in several layouts that give the same vectors (cosine ≥ 0.99999): those names
 * share one identity, so a store written through one layout opens with the other without a
 * reindex.
 */

/** The bundled default model's identity (also a value of SERVICE_LOCAL_EMBEDDING_MODEL). */
export const BUNDLED_MODEL_ID = 'use-lite-static';

const SAME_TABLE: Record<string, string> = {
  'use-lite-static-m2v': BUNDLED_MODEL_ID,
  'use-lite-static-wordpiece': BUNDLED_MODEL_ID,
};

/** The identity recorded for a model known by `name` (a folder name or a hub id). */
export function canonicalModelId(name: string): string {
  return SAME_TABLE[name] ?? name;
}

/** True when vectors recorded as `a` can be compared with vectors made by `b`. */
export function sameEmbeddingModel(a: EmbeddingInfo, b: EmbeddingInfo): boolean {
  return canonicalModelId(a.model) === canonicalModelId(b.model) && a.dimension === b.dimension;
}
