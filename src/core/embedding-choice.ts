import type { EmbeddingInfo } from './types.js';

/** The embedding settings the choice depends on (config/embedding.ts). */
export interface EmbeddingChoice {
  local: boolean;
  localReason: string | null;
  hostedModel: string;
  hostedApiKey: string | null;
  explicit: boolean;
}

/**
 * The store's model stays in force (docs/behavior.md "Embedding model of a store"): vectors of
 * different models cannot be compared, so when the operator named no embedding model, the
 * embedder follows the model the store was written with instead of the one the environment
 * happens to suggest. Setting an LLM key therefore no longer turns a store of local vectors
 * into a hosted-embeddings server that refuses to start; switching models stays an explicit
 * step (set the model, then `service reindex`).
 */
export function followStoredModel<T extends EmbeddingChoice>(settings: T, stored: EmbeddingInfo | null): T {
  if (stored === null || settings.explicit) return settings;
  if (stored.provider === 'local' && !settings.local) {
    return {
      ...settings,
      local: true,
      localReason: `the store holds ${stored.model} vectors; set SERVICE_EMBEDDING_MODEL (and run service reindex) to switch to hosted embeddings`,
    };
  }
  if (stored.provider === 'openai' && !settings.local && settings.hostedApiKey && stored.model !== settings.hostedModel) {
    return { ...settings, hostedModel: stored.model };
  }
  return settings;
}
