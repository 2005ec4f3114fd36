import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeHub, type FakeHub } from '../fixtures/fake-hub.js';
import { runCli } from '../support/cli.js';
import { TEST_ONNX_MODEL_PATH, tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * The default install needs no model runtime: `service serve` with no embedding variable at
 * all embeds with the bundled static model while @huggingface/transformers cannot even be
 * resolved (a loader hook hides it, as an install without optional dependencies would).
 */
const HIDE_TRANSFORMERS = `--import=${pathToFileURL(join(import.meta.dirname, '..', 'fixtures', 'hide-transformers', 'register.mjs')).href}`;
/** No embedding variable at all, and no model runtime. */
const BARE = { SERVICE_LOCAL_EMBEDDINGS: undefined, SERVICE_EMBEDDING_MODEL_PATH: undefined, NODE_OPTIONS: HIDE_TRANSFORMERS };

let dir: { path: string; remove(): Promise<void> };
let hub: FakeHub;
const started: ServerHandle[] = [];
beforeAll(async () => {
  dir = await tempDir('cli-embedding-models-');
  hub = await startFakeHub({ 'Xenova/all-MiniLM-L6-v2/config.json': { body: JSON.stringify({ model_type: 'bert' }) } });
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop('SIGKILL')));
  await hub.close();
  await dir.remove();
});

async function serve(dataPath: string, env: Record<string, string | undefined>): Promise<ServerHandle> {
  const server = await startServer({ dataPath, env });
  started.push(server);
  return server;
}

async function learn(url: string, task: string, env: Record<string, string | undefined> = BARE): Promise<void> {
  const res = await runCli(['learn', '--task', task, '--code', 'x = 1', '--eval-score', '8', '--url', url], { env });
  expect(res.stderr).toBe('');
  expect(res.code).toBe(0);
}

async function topMatch(url: string, task: string): Promise<{ task: string; similarity: number }> {
  const res = await runCli(['recall', task, '--limit', '1', '--readonly', '--url', url], { env: BARE });
  expect(res.code).toBe(0);
  const { matches } = JSON.parse(res.stdout) as { matches: { similarity: number; pattern: { task: string } }[] };
  return { task: matches[0].pattern.task, similarity: matches[0].similarity };
}

const TASKS = ['parse a CSV file and sum one column', 'resize images to thumbnails', 'send a slack message when CI fails'];

describe('embedding models from the command line', () => {
  it('serve learns and recalls with the bundled model, no variable, and transformers.js not resolvable', async () => {
    const dataPath = join(dir.path, 'bare');
    const server = await serve(dataPath, BARE);
    for (const task of TASKS) await learn(server.url, task);
    expect((await topMatch(server.url, 'read a csv and add up a column')).task).toBe(TASKS[0]);
    expect((await topMatch(server.url, 'make small thumbnails of pictures')).task).toBe(TASKS[1]);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    expect(server.stderr()).not.toMatch(/transformers|error/i);
    const meta = JSON.parse(await readFile(join(dataPath, 'meta.json'), 'utf8')) as unknown;
    expect(meta).toMatchObject({ embedding: { provider: 'local', model: 'use-lite-static', dimension: 384 } });
  });

  it('a transformer model asked for without transformers.js: startup refused with one line naming the install command', async () => {
    for (const env of [
      { ...BARE, SERVICE_EMBEDDING_MODEL_PATH: TEST_ONNX_MODEL_PATH },
      { ...BARE, SERVICE_LOCAL_EMBEDDING_MODEL: 'Xenova/all-MiniLM-L6-v2', HF_ENDPOINT: hub.url },
    ]) {
      const refused = await runCli(['serve', '--port', '0'], { env: { ...env, SERVICE_DATA_PATH: join(dir.path, 'refused') } });
      expect(refused.code).not.toBe(0);
      const errors = refused.stderr.split('\n').filter((line) => line.startsWith('error:'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain('needs the optional package @huggingface/transformers');
      expect(errors[0]).toContain('npm install @huggingface/transformers@3');
    }
  });

  it('a store written through the ONNX copy of the table opens with the bundled model without reindex', async () => {
    const dataPath = join(dir.path, 'onnx-then-bundled');
    const onnx = await serve(dataPath, { SERVICE_EMBEDDING_MODEL_PATH: TEST_ONNX_MODEL_PATH });
    for (const task of TASKS) await learn(onnx.url, task, {});
    expect(await onnx.stop()).toEqual({ code: 0, signal: null });

    const bundled = await serve(dataPath, BARE);
    const match = await topMatch(bundled.url, TASKS[2]);
    expect(match.task).toBe(TASKS[2]);
    expect(match.similarity).toBeGreaterThan(0.9999);
    expect(await bundled.stop()).toEqual({ code: 0, signal: null });
  });
});
