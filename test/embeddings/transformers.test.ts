import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as transformers from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { UnavailableError } from '../../src/core/errors.js';
import { createEmbedder, type CachedEmbedder } from '../../src/adapters/embeddings/index.js';
import { TransformersEmbedder, type TransformersEmbedderOptions } from '../../src/adapters/embeddings/transformers.js';
import { noopInstruments, type Logger } from '../../src/ports/observability.js';
import { TEST_ONNX_MODEL_PATH as MODEL_PATH } from '../support/env.js';

/** The transformers.js path: the ONNX copy of the bundled table (a test fixture). */
function onnxEmbedder(opts: Partial<TransformersEmbedderOptions> = {}): TransformersEmbedder {
  return new TransformersEmbedder({
    transformers, modelId: 'use-lite-static', model: 'unused', modelPath: MODEL_PATH, cacheDir: dataPath, ...opts,
  });
}

/** A logger that keeps its messages, so tests can see what the embedder reported. */
function recordingLogger(): Logger & { messages: string[] } {
  const messages: string[] = [];
  const keep = (_obj: object, msg?: string): void => { messages.push(msg ?? ''); };
  return { messages, debug: keep, info: keep, warn: keep, error: keep };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot;
}

function norm(v: Float32Array): number {
  return Math.sqrt(cosine(v, v));
}

let dataPath: string;
let embedder: CachedEmbedder;

beforeAll(async () => {
  dataPath = await mkdtemp(join(tmpdir(), 'embed-local-'));
  const config = loadConfig({
    SERVICE_LOCAL_EMBEDDINGS: '1',
    SERVICE_EMBEDDING_MODEL_PATH: MODEL_PATH,
    SERVICE_DATA_PATH: dataPath,
  });
  embedder = await createEmbedder(config, { logger: recordingLogger(), instruments: noopInstruments });
});

afterAll(async () => {
  await embedder?.close();
  await rm(dataPath, { recursive: true, force: true });
});

describe('transformers.js embedder (offline model folder)', () => {
  it('reports the model identity (shared by both layouts of the table) and the dimension read from the model', () => {
    expect(embedder.info).toEqual({ provider: 'local', model: 'use-lite-static', dimension: 384 });
  });

  it('returns one unit-length vector of the model dimension per text', async () => {
    const vectors = await embedder.embed(['parse a CSV file', 'resize images in a folder to thumbnails', '']);
    expect(vectors).toHaveLength(3);
    for (const v of vectors.slice(0, 2)) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v).toHaveLength(384);
      expect(norm(v)).toBeCloseTo(1, 4);
    }
    expect(vectors[2]).toHaveLength(384);
  });

  it('places a paraphrase closer than unrelated tasks', async () => {
    const [query, paraphrase, email, images] = await embedder.embed([
      'parse a CSV file and compute the average of a column',
      'read a csv and calculate the mean of one column',
      'send an email notification when the build fails',
      'resize images in a folder to thumbnails',
    ]);
    const close = cosine(query, paraphrase);
    expect(close).toBeGreaterThan(cosine(query, email));
    expect(close).toBeGreaterThan(cosine(query, images));
  });

  it('gives the same vectors in a batch as one by one (padding does not leak)', async () => {
    const direct = onnxEmbedder({ batchSize: 3 });
    try {
      const texts = Array.from({ length: 8 }, (_, i) =>
        `task ${i}: ${'write a function that validates user input '.repeat(i + 1)}`.trim());
      const batched = await direct.embed(texts);
      for (let i = 0; i < texts.length; i++) {
        const [single] = await direct.embed([texts[i]]);
        expect(cosine(batched[i], single)).toBeCloseTo(1, 5);
      }
    } finally {
      await direct.close();
    }
  });

  it('loads once when the first calls arrive together', async () => {
    const logger = recordingLogger();
    const lazy = onnxEmbedder({ logger });
    try {
      const [a, b, c] = await Promise.all([lazy.embed(['one']), lazy.embed(['two']), lazy.load()]);
      expect(a[0]).toHaveLength(384);
      expect(b[0]).toHaveLength(384);
      expect(c.dimension).toBe(384);
      expect(logger.messages.filter((m) => m === 'local embedding model loaded')).toHaveLength(1);
    } finally {
      await lazy.close();
    }
  });
});

describe('transformers.js embedder load failures', () => {
  it('names SERVICE_EMBEDDING_MODEL_PATH when the folder holds no model', async () => {
    const missing = join(dataPath, 'no-such-model');
    const logger = recordingLogger();
    const config = loadConfig({ SERVICE_LOCAL_EMBEDDINGS: '1', SERVICE_EMBEDDING_MODEL_PATH: missing, SERVICE_DATA_PATH: dataPath });
    // Startup survives a bad model (logged), the first embed says what is wrong.
    const broken = await createEmbedder(config, { logger, instruments: noopInstruments });
    expect(logger.messages).toContain('local embedding model not loaded yet');
    const failure = broken.embed(['anything']);
    await expect(failure).rejects.toBeInstanceOf(UnavailableError);
    await expect(failure).rejects.toThrow(/SERVICE_EMBEDDING_MODEL_PATH=".*no-such-model"/);
    await broken.close();
  });

  it('tells the user to set SERVICE_EMBEDDING_MODEL_PATH when the hub cannot be reached', async () => {
    const savedHost = transformers.env.remoteHost;
    // A loopback port nobody listens on refuses connections: an unreachable hub, on any machine.
    const hubModel = onnxEmbedder({
      model: 'Xenova/all-MiniLM-L6-v2', modelPath: null, cacheDir: join(dataPath, 'models'),
      hubEndpoint: `http://127.0.0.1:${await closedPort()}`,
    });
    try {
      const failure = hubModel.embed(['anything']);
      await expect(failure).rejects.toBeInstanceOf(UnavailableError);
      await expect(failure).rejects.toThrow(/Xenova\/all-MiniLM-L6-v2.*ECONNREFUSED.*set SERVICE_EMBEDDING_MODEL_PATH/s);
      // A failed load is not remembered: the next call tries again (and fails again here).
      await expect(hubModel.load()).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      transformers.env.remoteHost = savedHost;
      await hubModel.close();
    }
  });
});
