import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEmbedder } from '../../src/adapters/embeddings/index.js';
import { OpenAiEmbedder } from '../../src/adapters/embeddings/openai.js';
import { loadConfig } from '../../src/config/index.js';
import { UnavailableError } from '../../src/core/errors.js';
import { noopInstruments, silentLogger } from '../../src/ports/observability.js';
import { startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.js';

const KEY = 'sk-test-embeddings-key';
let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm({ apiKey: KEY });
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => fake.reset());

function embedder(opts: Partial<ConstructorParameters<typeof OpenAiEmbedder>[0]> = {}): OpenAiEmbedder {
  return new OpenAiEmbedder({
    model: 'text-embedding-3-small', apiKey: KEY, baseUrl: fake.openaiBaseUrl, timeoutSeconds: 5, maxRetries: 0, ...opts,
  });
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

function embeddingBodies(): Array<{ model: string; input: string[] }> {
  return fake.requests.filter((r) => r.route === 'embeddings').map((r) => r.body as { model: string; input: string[] });
}

describe('OpenAI embedder', () => {
  it('returns unit vectors of 1536 dimensions for text-embedding-3-small, in input order', async () => {
    const e = embedder();
    expect(e.info).toEqual({ provider: 'openai', model: 'text-embedding-3-small', dimension: 1536 });
    const texts = ['parse a csv file', 'resize images', 'parse a csv file'];
    const vectors = await e.embed(texts);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v).toHaveLength(1536);
      expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 5);
    }
    expect(dot(vectors[0], vectors[2])).toBeCloseTo(1, 5);
    expect(dot(vectors[0], vectors[1])).toBeLessThan(0.9);
    expect(embeddingBodies()).toEqual([expect.objectContaining({ model: 'text-embedding-3-small', input: texts })]);
  });

  it('sends at most 256 inputs per request', async () => {
    const e = embedder();
    const texts = Array.from({ length: 600 }, (_, i) => `task number ${i}`);
    const vectors = await e.embed(texts);
    expect(vectors).toHaveLength(600);
    expect(embeddingBodies().map((b) => b.input.length)).toEqual([256, 256, 88]);
    // Order survives batching: the last vector is the last text's.
    const [last] = await e.embed(['task number 599']);
    expect(dot(vectors[599], last)).toBeCloseTo(1, 5);
  });

  it('reports the wider dimension of text-embedding-3-large', async () => {
    const e = embedder({ model: 'text-embedding-3-large' });
    const [v] = await e.embed(['hello']);
    expect(v).toHaveLength(3072);
    expect(e.info.dimension).toBe(3072);
  });

  it('turns a refused key into UnavailableError', async () => {
    const e = embedder({ apiKey: 'sk-wrong' });
    const failure = e.embed(['hello']);
    await expect(failure).rejects.toBeInstanceOf(UnavailableError);
    await expect(failure).rejects.toThrow(/HTTP 401/);
  });

  it('retries a connection failure, then gives up with UnavailableError', async () => {
    // A server that hangs up on every connection: each attempt is a connection error.
    let attempts = 0;
    const server = createServer((socket) => {
      attempts++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const e = embedder({ baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 1 });
      await expect(e.embed(['hello'])).rejects.toThrow(UnavailableError);
      expect(attempts).toBe(2);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('is chosen by createEmbedder when a provider key is configured, with the LLM base URL', async () => {
    const config = loadConfig({ LLM_PROVIDER_A_API_KEY: KEY, SERVICE_LLM_BASE_URL: fake.openaiBaseUrl });
    const cached = await createEmbedder(config, { logger: silentLogger, instruments: noopInstruments });
    expect(cached.info.provider).toBe('openai');
    await cached.embed(['one', 'two']);
    await cached.embed(['two']);
    expect(embeddingBodies().map((b) => b.input)).toEqual([['one', 'two']]);
    expect(cached.stats()).toEqual({ hits: 1, misses: 2 });
  });
});
