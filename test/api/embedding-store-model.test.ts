import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig, type Env } from '../../src/config/index.js';
import { createJsonStorage } from '../../src/adapters/storage/json/index.js';

/**
 * docs/behavior.md "Embedding model of a store": an LLM key alone no longer switches the
 * embedding model of an existing store; only an explicit setting does (and then `service
 * reindex` is named). No network: the hosted embedder is built but never called.
 */

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-store-model-'));
  dirs.push(dir);
  return dir;
}

/** No embedding variable at all: the defaults decide (bundled local model without a key). */
const bare = (dir: string, extra: Env = {}) => loadConfig({
  SERVICE_DATA_PATH: dir, SERVICE_LLM_PROVIDER: 'none', SERVICE_LOG_LEVEL: 'silent', SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true', ...extra,
});
// A closed loopback port: nothing leaves the machine if anything does try the hosted API.
const WITH_KEY = { SERVICE_LLM_PROVIDER: 'provider_a', LLM_PROVIDER_A_API_KEY: 'sk-test-not-used', SERVICE_LLM_BASE_URL: 'http://127.0.0.1:9/v1' };

describe('the embedding model of an existing store', () => {
  it('stays local when an LLM key is set later, with nothing else changed', async () => {
    const dir = await dataDir();
    const first = await createApp(bare(dir));
    expect(first.deps.embedder.info).toMatchObject({ provider: 'local', model: 'use-lite-static' });
    await first.close();

    // The key alone would pick hosted embeddings for a new store; this store keeps its model.
    const keyed = await createApp(bare(dir, WITH_KEY));
    expect(keyed.deps.embedder.info).toMatchObject({ provider: 'local', model: 'use-lite-static', dimension: 384 });
    expect(keyed.deps.config.embedding.localReason).toMatch(/the store holds use-lite-static vectors/);
    expect(keyed.deps.llm).not.toBeNull();
    await keyed.close();
  });

  it('a new store with a key still gets hosted embeddings (nothing to follow)', async () => {
    const app = await createApp(bare(await dataDir(), WITH_KEY));
    expect(app.deps.embedder.info).toMatchObject({ provider: 'openai', model: 'text-embedding-3-small' });
    await app.close();
  });

  it('an explicit SERVICE_EMBEDDING_MODEL switches, and the mismatch names service reindex', async () => {
    const dir = await dataDir();
    await (await createApp(bare(dir))).close();
    const err = await createApp(bare(dir, { ...WITH_KEY, SERVICE_EMBEDDING_MODEL: 'text-embedding-3-small' })).then(async (app) => {
      await app.close();
      return null;
    }, (e: Error) => e);
    expect(err?.message).toMatch(/embedding model mismatch: the store holds use-lite-static \(384 dimensions\) vectors/);
    expect(err?.message).toContain('service reindex');
  });

  it('a store of hosted vectors keeps its hosted model when SERVICE_EMBEDDING_MODEL is not set', async () => {
    const dir = await dataDir();
    const storage = await createJsonStorage({ dataPath: dir });
    await storage.meta.setEmbeddingInfo({ provider: 'openai', model: 'text-embedding-3-large', dimension: 3072 });
    await storage.close();
    const app = await createApp(bare(dir, WITH_KEY));
    expect(app.deps.embedder.info).toMatchObject({ provider: 'openai', model: 'text-embedding-3-large', dimension: 3072 });
    await app.close();
  });
});
