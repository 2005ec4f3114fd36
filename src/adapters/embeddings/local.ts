import { basename, resolve } from 'node:path';
import type { Config } from '../../config.js';
import { BUNDLED_MODEL_ID, canonicalModelId } from '../../core/embedding-model.js';
import type { EmbeddingInfo } from '../../core/types.js';
import type { Embedder } from '../../ports/embedder.js';
import type { Logger } from '../../ports/observability.js';
import { bundledModelPath, detectLayout } from './model-folder.js';
import { StaticEmbedder } from './static.js';
import { importTransformers, TransformersEmbedder } from './transformers.js';

/** A local embedder whose model can be loaded ahead of the first embed. */
export interface LocalEmbedder extends Embedder {
  load(): Promise<EmbeddingInfo>;
}

/**
 * Picks the local embedder for the configuration: a model folder (SERVICE_EMBEDDING_MODEL_PATH)
 * in either layout, the bundled static model (the default), or a hub model through
 * transformers.js. transformers.js is imported only on that last kind of path, so its absence
 * stops startup only when a transformer model was asked for (TransformersMissingError).
 */
export async function createLocalEmbedder(
  embedding: Config['embedding'],
  opts: { cacheDir: string; logger: Logger },
): Promise<LocalEmbedder> {
  const { logger, cacheDir } = opts;
  const { localModelPath: path, localModel: model, hubEndpoint } = embedding;
  if (path) {
    const folder = resolve(path);
    const origin = `SERVICE_EMBEDDING_MODEL_PATH="${path}"`;
    const modelId = canonicalModelId(basename(folder));
    if ((await detectLayout(folder)) === 'model2vec') return new StaticEmbedder({ folder, modelId, origin, logger });
    const transformers = await importTransformers(`the transformers.js model folder ${origin}`);
    return new TransformersEmbedder({ transformers, modelId, model: modelId, modelPath: path, cacheDir, hubEndpoint, logger });
  }
  if (model === BUNDLED_MODEL_ID) {
    return new StaticEmbedder({ folder: bundledModelPath(), modelId: BUNDLED_MODEL_ID, origin: 'the bundled model', logger });
  }
  const transformers = await importTransformers(`SERVICE_LOCAL_EMBEDDING_MODEL=${model}`);
  return new TransformersEmbedder({ transformers, modelId: canonicalModelId(model), model, modelPath: null, cacheDir, hubEndpoint, logger });
}
