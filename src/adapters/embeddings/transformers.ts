import { dirname, join, resolve, basename } from 'node:path';
import type { FeatureExtractionPipeline } from '@huggingface/transformers';
import { EmbeddingUnavailableError } from '../../core/errors.js';
import type { EmbeddingInfo } from '../../core/types.js';
import { DEFAULT_EMBEDDING_DIMENSION as DEFAULT_DIMENSION, type Embedder } from '../../ports/embedder.js';
import { silentLogger, type Logger } from '../../ports/observability.js';
import { chunks, toUnitVector } from './vector.js';

/**
 * Local CPU embeddings through transformers.js (feature-extraction, mean pooling, L2 norm),
 * for transformer models: a hub model id, downloaded on first use into `cacheDir`, or a
 * folder in the transformers.js layout loaded offline (SERVICE_EMBEDDING_MODEL_PATH).
 * transformers.js (and its ONNX runtime) is an optional dependency: the module is passed in
 * by the factory, which imports it only when such a model is configured.
 */
export type TransformersModule = typeof import('@huggingface/transformers');

/** The one-line reason startup stops when a transformer model is asked for without the package. */
export class TransformersMissingError extends Error {
  constructor(what: string) {
    super(
      `${what} needs the optional package @huggingface/transformers, which is not installed: ` +
        'run `npm install @huggingface/transformers@3` (or use the bundled static model: unset SERVICE_LOCAL_EMBEDDING_MODEL and SERVICE_EMBEDDING_MODEL_PATH)',
    );
    this.name = 'TransformersMissingError';
  }
}

/** Imports transformers.js; its absence becomes a TransformersMissingError naming `what` needs it. */
export async function importTransformers(what: string): Promise<TransformersModule> {
  try {
    return await import('@huggingface/transformers');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes('@huggingface/transformers')) {
      throw new TransformersMissingError(what);
    }
    throw err;
  }
}

export interface TransformersEmbedderOptions {
  /** The transformers.js module (see importTransformers). */
  transformers: TransformersModule;
  /** The identity recorded by the store (see core/embedding-model.ts). */
  modelId: string;
  /** Hub model id, e.g. Xenova/all-MiniLM-L6-v2 (ignored when modelPath is set). */
  model: string;
  /** Folder holding a transformers.js model (config.json, tokenizer.json, onnx/model_quantized.onnx). */
  modelPath: string | null;
  /** Where downloaded hub models are cached. */
  cacheDir: string;
  /** Hub base URL (HF_ENDPOINT); transformers.js's own default when null. */
  hubEndpoint?: string | null;
  /** Texts per forward pass; bounds the padded tensor's memory. */
  batchSize?: number;
  logger?: Logger;
}

const DEFAULT_BATCH_SIZE = 64;
const PROBE_TEXT = 'dimension probe';

/**
 * transformers.js keeps its settings (remote allowed, local folder, cache folder) in one
 * global `env` that is read while files are fetched. Loads are serialised so two embedders
 * with different settings in one process (tests, bench) never see each other's settings.
 */
let loadQueue: Promise<unknown> = Promise.resolve();
function serialised<T>(task: () => Promise<T>): Promise<T> {
  const run = loadQueue.then(task, task);
  loadQueue = run.catch(() => undefined);
  return run;
}

interface LoadedModel {
  extract: FeatureExtractionPipeline;
  dimension: number;
}

export class TransformersEmbedder implements Embedder {
  private readonly modelId: string;
  private readonly batchSize: number;
  private readonly logger: Logger;
  private loading: Promise<LoadedModel> | null = null;
  private dimension = DEFAULT_DIMENSION;

  constructor(private readonly opts: TransformersEmbedderOptions) {
    this.modelId = opts.modelId;
    this.batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
    this.logger = opts.logger ?? silentLogger;
  }

  /** The dimension is the model's real one once loaded (see load()). */
  get info(): EmbeddingInfo {
    return { provider: 'local', model: this.modelId, dimension: this.dimension };
  }

  /**
   * Loads the model once; concurrent callers share the same load. A failed load is
   * forgotten so a later call retries (the hub may come back).
   */
  async load(): Promise<EmbeddingInfo> {
    await this.loaded();
    return this.info;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const { extract, dimension } = await this.loaded();
    const vectors: Float32Array[] = [];
    for (const batch of chunks(texts, this.batchSize)) {
      let data: Float32Array;
      try {
        data = (await extract(batch, { pooling: 'mean', normalize: true })).data as Float32Array;
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        throw new EmbeddingUnavailableError(`local embedding model "${this.modelId}" failed: ${reason}`, { cause: err });
      }
      for (let row = 0; row < batch.length; row++) {
        vectors.push(toUnitVector(data.subarray(row * dimension, (row + 1) * dimension)));
      }
    }
    return vectors;
  }

  async close(): Promise<void> {
    const loading = this.loading;
    this.loading = null;
    if (!loading) return;
    const loaded = await loading.catch(() => null);
    await loaded?.extract.dispose();
  }

  private loaded(): Promise<LoadedModel> {
    if (!this.loading) {
      const loading = serialised(() => this.loadModel());
      loading.catch(() => {
        if (this.loading === loading) this.loading = null;
      });
      this.loading = loading;
    }
    return this.loading;
  }

  private async loadModel(): Promise<LoadedModel> {
    const { modelPath, cacheDir } = this.opts;
    const { env, pipeline } = this.opts.transformers;
    const started = performance.now();
    let extract: FeatureExtractionPipeline | undefined;
    let dimension: number;
    try {
      if (modelPath) {
        const folder = resolve(modelPath);
        env.allowRemoteModels = false;
        env.allowLocalModels = true;
        // transformers.js joins localModelPath and the model id; keep the trailing slash.
        env.localModelPath = join(dirname(folder), '/');
        extract = await pipeline('feature-extraction', basename(folder), { dtype: 'q8', local_files_only: true });
      } else {
        env.allowRemoteModels = true;
        env.cacheDir = cacheDir;
        // transformers.js joins remoteHost and the path without a separator.
        if (this.opts.hubEndpoint) env.remoteHost = `${this.opts.hubEndpoint.replace(/\/+$/, '')}/`;
        this.logger.info({ model: this.modelId, cacheDir }, 'loading local embedding model (downloaded on first use)');
        extract = await pipeline('feature-extraction', this.opts.model, { dtype: 'q8', cache_dir: cacheDir });
      }
      // Trust the model, not the configuration: its output width is the dimension.
      const probe = await extract([PROBE_TEXT], { pooling: 'mean', normalize: true });
      dimension = probe.dims[probe.dims.length - 1];
    } catch (err) {
      await extract?.dispose().catch(() => undefined);
      throw new EmbeddingUnavailableError(this.describeLoadFailure(err), { cause: err });
    }
    this.dimension = dimension;
    this.logger.info(
      { model: this.modelId, dimension, ms: Math.round(performance.now() - started) },
      'local embedding model loaded',
    );
    return { extract, dimension };
  }

  private describeLoadFailure(err: unknown): string {
    let reason = err instanceof Error ? err.message : String(err);
    // fetch() hides the useful part (DNS failure, refused connection) in `cause`.
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : null;
    if (cause && !reason.includes(cause)) reason = `${reason}: ${cause}`;
    reason = reason.replace(/\.+$/, '');
    if (this.opts.modelPath) {
      return `cannot load the local embedding model from SERVICE_EMBEDDING_MODEL_PATH="${this.opts.modelPath}": ${reason}. ` +
        'A transformers.js model folder holds config.json, tokenizer.json and onnx/model_quantized.onnx.';
    }
    return `cannot load the local embedding model "${this.opts.model}" (${reason}). It is downloaded from the ` +
      `Hugging Face hub on first use into ${this.opts.cacheDir}; on a machine that cannot reach the hub, ` +
      'set SERVICE_EMBEDDING_MODEL_PATH to a folder holding the model, or unset SERVICE_LOCAL_EMBEDDING_MODEL to use the bundled model.';
  }
}
