import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubFile } from '../../src/adapters/embeddings/hub-download.js';
import { createLocalEmbedder } from '../../src/adapters/embeddings/local.js';
import { StaticEmbedder } from '../../src/adapters/embeddings/static.js';
import { TransformersEmbedder } from '../../src/adapters/embeddings/transformers.js';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/ports/observability.js';
import { startFakeHub, type FakeHub } from '../fixtures/fake-hub.js';
import { tempDir } from '../support/env.js';
import { writeTinyModel } from '../support/tiny-static-model.js';

/** model2vec repositories from a hub (HF_ENDPOINT), downloaded on first use into the model cache. */
let dir: { path: string; remove(): Promise<void> };
let hub: FakeHub;
const REPO = 'minishlab/tiny-m2v';

beforeAll(async () => {
  dir = await tempDir('embedding-hub-');
  const source = await writeTinyModel(join(dir.path, 'source'));
  const file = (name: string) => readFile(join(source, name));
  const safetensors = await file('model.safetensors');
  hub = await startFakeHub({
    [`${REPO}/config.json`]: { body: await file('config.json') },
    [`${REPO}/tokenizer.json`]: { body: await file('tokenizer.json') },
    [`${REPO}/model.safetensors`]: { body: safetensors, redirect: true },
    'broken/m2v/config.json': { body: await file('config.json') },
    'broken/m2v/tokenizer.json': { body: await file('tokenizer.json') },
    'broken/m2v/model.safetensors': { body: safetensors, cutShort: true },
    'Xenova/a-transformer/config.json': { body: JSON.stringify({ model_type: 'bert', hidden_size: 384 }) },
  });
});
afterAll(async () => {
  await hub.close();
  await dir.remove();
});

function embedderFor(model: string, cacheDir: string) {
  const config = loadConfig({ SERVICE_LOCAL_EMBEDDING_MODEL: model, HF_ENDPOINT: hub.url });
  return createLocalEmbedder(config.embedding, { cacheDir, logger: silentLogger });
}

describe('static models from the hub', () => {
  it('downloads the three files once into the cache, following redirects, then reads them offline', async () => {
    const cacheDir = join(dir.path, 'cache-ok');
    hub.requests.length = 0;
    const embedder = await embedderFor(REPO, cacheDir);
    expect(embedder).toBeInstanceOf(StaticEmbedder);
    expect(await embedder.load()).toEqual({ provider: 'local', model: REPO, dimension: 4 });
    const [vector] = await embedder.embed(['hello world']);
    expect(vector.every(Number.isFinite)).toBe(true);
    expect(hub.requests).toEqual([
      `/${REPO}/resolve/main/config.json`,
      `/${REPO}/resolve/main/tokenizer.json`,
      `/${REPO}/resolve/main/model.safetensors`,
      `/cdn/${REPO}/resolve/main/model.safetensors`,
    ]);
    expect((await readdir(join(cacheDir, 'minishlab', 'tiny-m2v'))).sort()).toEqual(['config.json', 'model.safetensors', 'tokenizer.json']);

    // Cached: a second embedder reads the folder without asking the hub.
    hub.requests.length = 0;
    const again = await embedderFor(REPO, cacheDir);
    expect(await again.load()).toEqual({ provider: 'local', model: REPO, dimension: 4 });
    expect(hub.requests).toEqual([]);
  });

  it('an interrupted download leaves no file under the real name, and the next load tries again', async () => {
    const cacheDir = join(dir.path, 'cache-broken');
    const embedder = await embedderFor('broken/m2v', cacheDir);
    await expect(embedder.load()).rejects.toThrow(/SERVICE_LOCAL_EMBEDDING_MODEL=broken\/m2v/);
    expect((await readdir(join(cacheDir, 'broken', 'm2v'))).sort()).toEqual(['config.json', 'tokenizer.json']);
    hub.requests.length = 0;
    await expect(embedder.load()).rejects.toThrow();
    expect(hub.requests).toContain('/broken/m2v/resolve/main/model.safetensors');
  });

  it('shows progress on a terminal, and nothing when the stream is not one', async () => {
    const written: string[] = [];
    const terminal = { isTTY: true, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    const opts = { endpoint: hub.url, repo: REPO, cacheDir: join(dir.path, 'cache-progress'), progress: terminal };
    await hubFile(opts, 'tokenizer.json');
    expect(written.at(-1)).toMatch(new RegExp(`^\\rdownloading ${REPO}/tokenizer.json: [\\d.]+ of [\\d.]+ MB\\n$`));
    const piped: string[] = [];
    const pipe = { isTTY: false, write: (text: string) => piped.push(text) } as unknown as NodeJS.WriteStream;
    await hubFile({ ...opts, cacheDir: join(dir.path, 'cache-piped'), progress: pipe }, 'tokenizer.json');
    expect(piped).toEqual([]);
  });

  it('names the URL and status of a file the hub does not have', async () => {
    const opts = { endpoint: hub.url, repo: 'nobody/nothing', cacheDir: join(dir.path, 'cache-404') };
    await expect(hubFile(opts, 'config.json')).rejects.toThrow(`cannot download ${hub.url}/nobody/nothing/resolve/main/config.json: HTTP 404`);
  });

  it('a repository whose config.json is not model2vec goes to transformers.js', async () => {
    expect(await embedderFor('Xenova/a-transformer', join(dir.path, 'cache-transformer'))).toBeInstanceOf(TransformersEmbedder);
  });
});
