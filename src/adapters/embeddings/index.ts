import { join, resolve } from 'node:path';
import type { Config } from '../../config/index.js';
import type { Embedder } from '../../ports/embedder.js';
import type { Instruments, Logger } from '../../ports/observability.js';
import { CachedEmbedder } from './cache.js';
import { createLocalEmbedder } from './local.js';
import { OpenAiEmbedder } from './openai.js';

export { CachedEmbedder } from './cache.js';
export { OpenAiEmbedder } from './openai.js';
export { StaticEmbedder } from './static.js';

/**
 * Builds the embedder chosen by config.embedding (local static or transformers.js, or hosted OpenAI),
 * wrapped in the LRU cache. A local model is loaded here (unless `preload: false`) so `info`
 * carries its real dimension before the startup check against the store; when that fails (hub unreachable, bad folder) the service still starts, the
 * failure is logged, and the next embed() retries the load and throws the clear error
 * (recall then falls back to keywords, deep health reports the embedder as failing).
 */
export async function createEmbedder(
  config: Config,
  opts: { logger: Logger; instruments: Instruments; preload?: boolean },
): Promise<CachedEmbedder> {
  const { embedding } = config;
  const { logger, instruments, preload = true } = opts;
  let inner: Embedder;
  if (embedding.local || !embedding.hostedApiKey) {
    // Throws (startup stops) only when a transformer model is asked for without transformers.js.
    const local = await createLocalEmbedder(embedding, { cacheDir: join(resolve(config.storage.dataPath), 'models'), logger });
    logger.info(
      {
        provider: 'local',
        model: local.info.model,
        modelPath: embedding.localModelPath,
        reason: embedding.localReason,
      },
      'using local embeddings',
    );
    if (preload) {
      try {
        await local.load();
      } catch (err) {
        logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'local embedding model not loaded yet');
      }
    }
    inner = local;
  } else {
    inner = new OpenAiEmbedder({
      model: embedding.hostedModel,
      apiKey: embedding.hostedApiKey,
      // The LLM base URL points at an OpenAI-compatible server only when provider A is used.
      baseUrl: config.llm.provider === 'anthropic' ? null : config.llm.baseUrl,
      timeoutSeconds: config.llm.timeoutSeconds,
    });
    logger.info({ provider: 'openai', model: embedding.hostedModel }, 'using hosted embeddings');
  }
  return new CachedEmbedder(inner, { instruments });
}
