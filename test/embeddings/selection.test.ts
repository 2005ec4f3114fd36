import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalEmbedder } from '../../src/adapters/embeddings/local.js';
import { bundledModelPath, detectLayout } from '../../src/adapters/embeddings/model-folder.js';
import { StaticEmbedder } from '../../src/adapters/embeddings/static.js';
import { TransformersEmbedder } from '../../src/adapters/embeddings/transformers.js';
import { loadConfig } from '../../src/config/index.js';
import { canonicalModelId, sameEmbeddingModel } from '../../src/core/embedding-model.js';
import { silentLogger } from '../../src/ports/observability.js';
import { TEST_MODEL_PATH, TEST_ONNX_MODEL_PATH, tempDir } from '../support/env.js';
import { writeTinyModel } from '../support/tiny-static-model.js';

let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => { dir = await tempDir('embedding-selection-'); });
afterAll(async () => { await dir.remove(); });

const embedder = (env: Record<string, string>) =>
  createLocalEmbedder(loadConfig(env).embedding, { cacheDir: join(dir.path, 'models'), logger: silentLogger });

describe('which local embedder a configuration gets', () => {
  it('no variable at all: the bundled static model', async () => {
    const config = loadConfig({});
    expect(config.embedding).toMatchObject({ local: true, localModel: 'use-lite-static', localModelPath: null, hubEndpoint: 'https://huggingface.co' });
    const chosen = await embedder({});
    expect(chosen).toBeInstanceOf(StaticEmbedder);
    expect(await chosen.load()).toEqual({ provider: 'local', model: 'use-lite-static', dimension: 384 });
    expect(bundledModelPath()).toBe(TEST_MODEL_PATH);
  });

  it('SERVICE_EMBEDDING_MODEL_PATH means local embeddings even when a provider key is present', () => {
    const config = loadConfig({ SERVICE_EMBEDDING_MODEL_PATH: TEST_MODEL_PATH, LLM_PROVIDER_A_API_KEY: 'sk-test' });
    expect(config.embedding.local).toBe(true);
    expect(config.embedding.localReason).toBe('SERVICE_EMBEDDING_MODEL_PATH is set');
    expect(loadConfig({ LLM_PROVIDER_A_API_KEY: 'sk-test' }).embedding.local).toBe(false);
  });

  it('tells the layout from config.json: model2vec is read in plain code, anything else by transformers.js', async () => {
    expect(await detectLayout(TEST_MODEL_PATH)).toBe('model2vec');
    expect(await detectLayout(TEST_ONNX_MODEL_PATH)).toBe('transformers');
    const tiny = await writeTinyModel(join(dir.path, 'my-static'));
    expect(await detectLayout(tiny)).toBe('model2vec');
    expect(await embedder({ SERVICE_EMBEDDING_MODEL_PATH: tiny })).toBeInstanceOf(StaticEmbedder);
    expect(await embedder({ SERVICE_EMBEDDING_MODEL_PATH: TEST_ONNX_MODEL_PATH })).toBeInstanceOf(TransformersEmbedder);
  });

  it('both layouts of the bundled table carry one identity; other folders keep their name', async () => {
    expect((await embedder({ SERVICE_EMBEDDING_MODEL_PATH: TEST_MODEL_PATH })).info.model).toBe('use-lite-static');
    expect((await embedder({ SERVICE_EMBEDDING_MODEL_PATH: TEST_ONNX_MODEL_PATH })).info.model).toBe('use-lite-static');
    expect(canonicalModelId('my-static')).toBe('my-static');
    const stored = { provider: 'local' as const, model: 'use-lite-static-wordpiece', dimension: 384 };
    expect(sameEmbeddingModel(stored, { provider: 'local', model: 'use-lite-static', dimension: 384 })).toBe(true);
    expect(sameEmbeddingModel(stored, { provider: 'local', model: 'other', dimension: 384 })).toBe(false);
  });

  it('HF_ENDPOINT must be a URL', () => {
    expect(loadConfig({ HF_ENDPOINT: 'http://127.0.0.1:9/' }).embedding.hubEndpoint).toBe('http://127.0.0.1:9/');
    expect(() => loadConfig({ HF_ENDPOINT: 'not a url' })).toThrow(/HF_ENDPOINT/);
  });
});
