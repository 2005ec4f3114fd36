import { EmbeddingUnavailableError } from '../../core/errors.js';
import type { EmbeddingInfo } from '../../core/types.js';
import type { Embedder } from '../../ports/embedder.js';
import { noopInstruments, type Instruments } from '../../ports/observability.js';

export interface CachedEmbedderOptions {
  /** Most recently used vectors kept (default 2,000: ~3 MB at 384 dimensions). */
  capacity?: number;
  /** Records service_embedding_duration_seconds for every call that reaches the model. */
  instruments?: Instruments;
}

const DEFAULT_CAPACITY = 2_000;

/**
 * An in-process LRU in front of any Embedder, keyed by model + text, so repeated recalls of
 * the same task skip the model. Only the misses of a call go to the inner embedder, in one
 * batch; results keep the caller's order.
 */
export class CachedEmbedder implements Embedder {
  private readonly capacity: number;
  private readonly instruments: Instruments;
  /** Map iteration order is insertion order: the first key is the least recently used. */
  private readonly entries = new Map<string, Float32Array>();
  private hits = 0;
  private misses = 0;
  private lastOutcome: 'unknown' | 'ok' | 'error' = 'unknown';

  constructor(private readonly inner: Embedder, opts: CachedEmbedderOptions = {}) {
    this.capacity = Math.max(1, opts.capacity ?? DEFAULT_CAPACITY);
    this.instruments = opts.instruments ?? noopInstruments;
  }

  /** The inner embedder's info (a local model reports its real dimension once loaded). */
  get info(): EmbeddingInfo {
    return this.inner.info;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const model = this.inner.info.model;
    const results = new Array<Float32Array | undefined>(texts.length);
    // Distinct missing texts, each with every position it fills.
    const missing = new Map<string, number[]>();
    texts.forEach((text, i) => {
      const cached = this.touch(cacheKey(model, text));
      if (cached) {
        this.hits++;
        results[i] = cached;
        return;
      }
      this.misses++;
      const positions = missing.get(text);
      if (positions) positions.push(i);
      else missing.set(text, [i]);
    });

    if (missing.size > 0) {
      const toEmbed = [...missing.keys()];
      const started = performance.now();
      let vectors: Float32Array[];
      try {
        vectors = await this.inner.embed(toEmbed);
        this.lastOutcome = 'ok';
      } catch (err) {
        this.lastOutcome = 'error';
        throw err;
      }
      this.instruments.embedding(this.inner.info.provider, (performance.now() - started) / 1000);
      if (vectors.length !== toEmbed.length) {
        throw new EmbeddingUnavailableError(`embedder ${model} returned ${vectors.length} vectors for ${toEmbed.length} texts`);
      }
      toEmbed.forEach((text, j) => {
        const vector = vectors[j];
        this.remember(cacheKey(model, text), vector);
        for (const i of missing.get(text) ?? []) results[i] = vector;
      });
    }
    // Copies, so a caller that scribbles on a vector cannot corrupt the cache.
    return results.map((v) => new Float32Array(v as Float32Array));
  }

  readiness(): 'unknown' | 'ok' | 'error' {
    return this.lastOutcome;
  }

  /** Hits and misses counted per input text since construction. */
  stats(): { hits: number; misses: number } {
    return { hits: this.hits, misses: this.misses };
  }

  async close(): Promise<void> {
    this.entries.clear();
    await this.inner.close?.();
  }

  /** Looks a key up and marks it most recently used. */
  private touch(key: string): Float32Array | undefined {
    const vector = this.entries.get(key);
    if (vector) {
      this.entries.delete(key);
      this.entries.set(key, vector);
    }
    return vector;
  }

  private remember(key: string, vector: Float32Array): void {
    this.entries.delete(key);
    this.entries.set(key, vector);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}

/** NUL cannot appear in a model id, so model + text never collide across models. */
function cacheKey(model: string, text: string): string {
  return `${model}\u0000${text}`;
}
