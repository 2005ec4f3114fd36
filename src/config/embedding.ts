import { BUNDLED_MODEL_ID } from '../core/embedding-model.js';
import { str, url, type Env } from './env-readers.js';

export interface EmbeddingSettings {
  embedding: {
    /** True when local embeddings are used (SERVICE_LOCAL_EMBEDDINGS or no provider key). */
    local: boolean;
    /** Why local was chosen (logged at startup). */
    localReason: string | null;
    hostedModel: string;
    hostedApiKey: string | null;
    /** (+) `use-lite-static` (the bundled static model, default) or a hub model id. */
    localModel: string;
    /** (+) Model folder, model2vec or transformers.js layout (loaded offline); set ⇒ local embeddings. */
    localModelPath: string | null;
    /** Hub base URL for model downloads (HF_ENDPOINT, for mirrors). */
    hubEndpoint: string;
    /**
     * (+) The operator chose the embedding model (SERVICE_LOCAL_EMBEDDINGS, SERVICE_EMBEDDING_MODEL,
     * SERVICE_LOCAL_EMBEDDING_MODEL or SERVICE_EMBEDDING_MODEL_PATH is set). Otherwise the model
     * a store was written with stays in force (core/embedding-choice.ts).
     */
    explicit: boolean;
  };
}

/** `hostedApiKey`: provider A's key, since hosted embeddings speak the OpenAI embeddings API. */
export function embeddingSettings(env: Env, hostedApiKey: string | null): EmbeddingSettings {
  const localFlag = str(env, 'SERVICE_LOCAL_EMBEDDINGS') !== null;
  const localModelPath = str(env, 'SERVICE_EMBEDDING_MODEL_PATH');
  // A model folder is an explicit choice of local embeddings: a provider key alone must not override it.
  const local = localFlag || localModelPath !== null || !hostedApiKey;
  const localReason = localFlag ? 'SERVICE_LOCAL_EMBEDDINGS is set'
    : localModelPath !== null ? 'SERVICE_EMBEDDING_MODEL_PATH is set'
    : !hostedApiKey ? 'no LLM_PROVIDER_A_API_KEY for hosted embeddings' : null;
  return {
    embedding: {
      local,
      localReason,
      hostedModel: str(env, 'SERVICE_EMBEDDING_MODEL') ?? 'text-embedding-3-small',
      hostedApiKey,
      localModel: str(env, 'SERVICE_LOCAL_EMBEDDING_MODEL') ?? BUNDLED_MODEL_ID,
      localModelPath,
      hubEndpoint: url(env, 'HF_ENDPOINT') ?? 'https://huggingface.co',
      explicit: localFlag || localModelPath !== null || ['SERVICE_EMBEDDING_MODEL', 'SERVICE_LOCAL_EMBEDDING_MODEL'].some((name) => str(env, name) !== null),
    },
  };
}
