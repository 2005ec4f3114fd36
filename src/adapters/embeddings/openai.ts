import OpenAI from 'openai';
import { EmbeddingUnavailableError } from '../../core/errors.js';
import { scrubSecretText } from '../../core/secret-scrub.js';
import type { EmbeddingInfo } from '../../core/types.js';
import type { Embedder } from '../../ports/embedder.js';
import { chunks, toUnitVector } from './vector.js';

/** Hosted embeddings through the OpenAI embeddings API (or a compatible server). */
export interface OpenAiEmbedderOptions {
  model: string;
  apiKey: string;
  /** e.g. http://127.0.0.1:1234/v1; the SDK default (api.openai.com) when null. */
  baseUrl: string | null;
  timeoutSeconds: number;
  /** SDK retries (exponential backoff, honours Retry-After) before we give up. */
  maxRetries?: number;
  /** Inputs per request; the API accepts up to 2,048, smaller requests fail and retry cheaper. */
  batchSize?: number;
}

const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};
const FALLBACK_DIMENSION = 1536;
const MAX_BATCH = 256;

export class OpenAiEmbedder implements Embedder {
  private readonly client: OpenAI;
  private readonly batchSize: number;
  private dimension: number;
  /** True once a reply has told us the model's real output width. */
  private dimensionLearned = false;

  constructor(private readonly opts: OpenAiEmbedderOptions) {
    this.client = new OpenAI({
      apiKey: opts.apiKey,
      baseURL: opts.baseUrl ?? undefined,
      timeout: Math.round(opts.timeoutSeconds * 1000),
      maxRetries: opts.maxRetries ?? 3,
    });
    this.batchSize = Math.min(opts.batchSize ?? MAX_BATCH, MAX_BATCH);
    this.dimension = KNOWN_DIMENSIONS[opts.model] ?? FALLBACK_DIMENSION;
  }

  get info(): EmbeddingInfo {
    return { provider: 'openai', model: this.opts.model, dimension: this.dimension };
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (const batch of chunks(texts, this.batchSize)) vectors.push(...(await this.embedBatch(batch)));
    return vectors;
  }

  private async embedBatch(batch: string[]): Promise<Float32Array[]> {
    let reply: OpenAI.Embeddings.CreateEmbeddingResponse;
    try {
      reply = await this.client.embeddings.create({
        model: this.opts.model,
        // The API rejects empty strings; a single space embeds as "nothing" just the same.
        input: batch.map((t) => (t === '' ? ' ' : t)),
        encoding_format: 'float',
      });
    } catch (err) {
      // The provider's text may echo the key: scrubbed, and the raw error is not kept as cause.
      throw new EmbeddingUnavailableError(`hosted embeddings (${this.opts.model}) failed: ${scrubSecretText(describe(err), [this.opts.apiKey])}`);
    }
    const rows = reply.data;
    if (!Array.isArray(rows) || rows.length !== batch.length) {
      throw new EmbeddingUnavailableError(
        `hosted embeddings (${this.opts.model}) returned ${Array.isArray(rows) ? rows.length : 'no'} vectors for ${batch.length} inputs`,
      );
    }
    // The API tags each vector with its input's index; do not rely on reply order.
    const ordered = new Array<Float32Array>(batch.length);
    for (const row of rows) {
      if (!Number.isInteger(row.index) || row.index < 0 || row.index >= batch.length || !Array.isArray(row.embedding)) {
        throw new EmbeddingUnavailableError(`hosted embeddings (${this.opts.model}) returned a malformed vector`);
      }
      ordered[row.index] = toUnitVector(row.embedding);
    }
    this.checkDimension(ordered);
    return ordered;
  }

  /** Learns the width from the first reply; afterwards every vector must match it. */
  private checkDimension(vectors: Float32Array[]): void {
    for (const v of vectors) {
      if (v === undefined) throw new EmbeddingUnavailableError(`hosted embeddings (${this.opts.model}) skipped an input`);
      if (!this.dimensionLearned) {
        this.dimension = v.length;
        this.dimensionLearned = true;
      } else if (v.length !== this.dimension) {
        throw new EmbeddingUnavailableError(
          `hosted embeddings (${this.opts.model}) returned ${v.length} dimensions, expected ${this.dimension}`,
        );
      }
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof OpenAI.APIError) {
    return err.status ? `HTTP ${err.status}: ${err.message}` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
