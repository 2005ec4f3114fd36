import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { Config } from '../../config/index.js';
import { BUNDLED_MODEL_ID, canonicalModelId } from '../../core/embedding-model.js';
import type { EmbeddingInfo } from '../../core/types.js';
import type { Embedder } from '../../ports/embedder.js';
import type { Logger } from '../../ports/observability.js';
import { hubFile, hubFolder, MODEL2VEC_FILES, type HubDownloadOptions } from './hub-download.js';
import { bundledModelPath, detectLayout, isModel2VecConfig, type ModelLayout } from './model-folder.js';
import { StaticEmbedder } from './static.js';
import { importTransformers, TransformersEmbedder, TransformersMissingError } from './transformers.js';

/** A local embedder whose model can be loaded ahead of the first embed. */
export interface LocalEmbedder extends Embedder {
  load(): Promise<EmbeddingInfo>;
}

/**
 * Picks the local embedder for the configuration: a model folder (SERVICE_EMBEDDING_MODEL_PATH)
 * in either layout, the bundled static model (the default), or a hub repository (model2vec:
 * downloaded into the cache and read in plain code; otherwise transformers.js). transformers.js is imported only on that last kind of path, so its absence
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
  // A hub repository: a model2vec one is downloaded and read in plain code, anything else is a
  // transformer for transformers.js. When the hub cannot say which (unreachable) and
  // transformers.js is absent, the static reader gets it: its load retries the download.
  const origin = `SERVICE_LOCAL_EMBEDDING_MODEL=${model}`;
  const hub: HubDownloadOptions = { endpoint: hubEndpoint, repo: model, cacheDir, progress: process.stderr };
  const layout = await hubLayout(hub);
  if (layout === 'model2vec' || (layout === null && !(await transformersInstalled()))) {
    const prepare = async (): Promise<void> => {
      for (const file of MODEL2VEC_FILES) {
        const path = await hubFile(hub, file);
        if (file === 'config.json' && !isModel2VecConfig(await readConfig(path))) throw new TransformersMissingError(origin);
      }
    };
    return new StaticEmbedder({ folder: hubFolder(cacheDir, model), modelId: canonicalModelId(model), origin, prepare, logger });
  }
  const transformers = await importTransformers(origin);
  return new TransformersEmbedder({ transformers, modelId: canonicalModelId(model), model, modelPath: null, cacheDir, hubEndpoint, logger });
}

/** The layout of a hub repository from its config.json (cached or downloaded); null when unreachable. */
async function hubLayout(hub: HubDownloadOptions): Promise<ModelLayout | null> {
  try {
    return isModel2VecConfig(await readConfig(await hubFile(hub, 'config.json'))) ? 'model2vec' : 'transformers';
  } catch {
    return null;
  }
}

async function readConfig(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8')) as unknown;
}

async function transformersInstalled(): Promise<boolean> {
  return importTransformers('').then(() => true, (err: unknown) => !(err instanceof TransformersMissingError));
}
