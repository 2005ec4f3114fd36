import { describe, expect, it } from 'vitest';
import { CachedEmbedder } from '../../src/adapters/embeddings/cache.js';
import type { EmbeddingInfo } from '../../src/core/types.js';
import type { Embedder } from '../../src/ports/embedder.js';
import { noopInstruments, type Instruments } from '../../src/ports/observability.js';

/** An inner embedder that records every batch it is asked for; vectors encode the text. */
class RecordingEmbedder implements Embedder {
  readonly calls: string[][] = [];
  closed = false;
  constructor(readonly info: EmbeddingInfo = { provider: 'local', model: 'test-model', dimension: 4 }) {}
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls.push([...texts]);
    return texts.map((t) => vectorFor(t));
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

/** A distinct, recognisable vector per text: its length and first char code. */
function vectorFor(text: string): Float32Array {
  return Float32Array.from([text.length, text.charCodeAt(0) || 0, 1, 0]);
}

describe('CachedEmbedder', () => {
  it('does not call the inner embedder again for a text it has seen', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner);
    const first = await cached.embed(['sort a list']);
    const second = await cached.embed(['sort a list']);
    expect(inner.calls).toEqual([['sort a list']]);
    expect(Array.from(second[0])).toEqual(Array.from(first[0]));
    expect(cached.stats()).toEqual({ hits: 1, misses: 1 });
  });

  it('sends only the misses, in one batch, and keeps the caller order', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner);
    await cached.embed(['b', 'dd']);
    const texts = ['a', 'b', 'ccc', 'dd', 'a', 'eeeee'];
    const vectors = await cached.embed(texts);
    expect(inner.calls).toEqual([['b', 'dd'], ['a', 'ccc', 'eeeee']]);
    expect(vectors.map((v) => Array.from(v))).toEqual(texts.map((t) => Array.from(vectorFor(t))));
    expect(cached.stats()).toEqual({ hits: 2, misses: 6 });
  });

  it('makes no inner call when every text is cached, or for an empty batch', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner);
    await cached.embed(['x', 'y']);
    await cached.embed(['y', 'x']);
    expect(await cached.embed([])).toEqual([]);
    expect(inner.calls).toHaveLength(1);
  });

  it('evicts the least recently used text when full', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner, { capacity: 2 });
    await cached.embed(['a']);
    await cached.embed(['b']);
    await cached.embed(['a']); // a is now the most recently used; b is the oldest
    await cached.embed(['c']); // evicts b
    inner.calls.length = 0;
    await cached.embed(['a', 'c']);
    expect(inner.calls).toEqual([]);
    await cached.embed(['b']);
    expect(inner.calls).toEqual([['b']]);
  });

  it('keys by model, so two models never share vectors', async () => {
    const info = { provider: 'local' as const, model: 'model-one', dimension: 4 };
    const inner = new RecordingEmbedder(info);
    const cached = new CachedEmbedder(inner);
    await cached.embed(['same text']);
    info.model = 'model-two';
    await cached.embed(['same text']);
    expect(inner.calls).toEqual([['same text'], ['same text']]);
  });

  it('hands out copies, so a caller cannot corrupt the cache', async () => {
    const cached = new CachedEmbedder(new RecordingEmbedder());
    const [v] = await cached.embed(['abc']);
    v.fill(99);
    const [again] = await cached.embed(['abc']);
    expect(Array.from(again)).toEqual(Array.from(vectorFor('abc')));
  });

  it('times only the calls that reach the model, under the provider label', async () => {
    const timings: Array<[string, number]> = [];
    const instruments: Instruments = { ...noopInstruments, embedding: (p, s) => { timings.push([p, s]); } };
    const cached = new CachedEmbedder(new RecordingEmbedder({ provider: 'openai', model: 'm', dimension: 4 }), { instruments });
    await cached.embed(['a', 'b']);
    await cached.embed(['a']);
    expect(timings).toHaveLength(1);
    expect(timings[0][0]).toBe('openai');
    expect(timings[0][1]).toBeGreaterThanOrEqual(0);
  });

  it('passes info through and closes the inner embedder', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner);
    expect(cached.info).toEqual(inner.info);
    await cached.close();
    expect(inner.closed).toBe(true);
  });
});
