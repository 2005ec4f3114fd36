import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { TEST_MODEL_PATH, tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * `service reindex` repairs an embedding-model change end to end. The "other" model is the
 * same offline model under another folder name (a symlink), which is enough for the store's
 * recorded model id to differ.
 */

let dir: { path: string; remove(): Promise<void> };
let otherModel: string;
const started: ServerHandle[] = [];

beforeAll(async () => {
  dir = await tempDir('cli-reindex-');
  await mkdir(join(dir.path, 'models'));
  otherModel = join(dir.path, 'models', 'renamed-model');
  await symlink(TEST_MODEL_PATH, otherModel);
});
afterAll(async () => {
  // Only matters when a test failed half-way: finished servers are already stopped.
  await Promise.all(started.map((s) => s.stop('SIGKILL')));
  await dir.remove();
});

const TASKS = ['tokenize a sentence into words', 'resize an image keeping its aspect ratio', 'debounce a function call'];

describe('service reindex', () => {
  it('refuses while a server holds the data, then re-embeds after a model change', async () => {
    const dataPath = join(dir.path, 'data');
    const server = await startServer({ dataPath });
    started.push(server);
    for (const task of TASKS) {
      expect((await runCli(['learn', '--task', task, '--code', 'x', '--eval-score', '6', '--url', server.url])).code).toBe(0);
    }

    const locked = await runCli(['reindex'], { env: { SERVICE_DATA_PATH: dataPath } });
    expect(locked.code).not.toBe(0);
    expect(locked.stderr).toMatch(/^error: .*in use by pid/m);
    expect(await server.stop()).toEqual({ code: 0, signal: null });

    // The model changed: the server refuses to mix vectors and names the fix.
    const otherEnv = { SERVICE_DATA_PATH: dataPath, SERVICE_EMBEDDING_MODEL_PATH: otherModel };
    const refused = await runCli(['serve', '--port', '0'], { env: otherEnv });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('service reindex');

    const reindexed = await runCli(['reindex'], { env: otherEnv });
    expect(reindexed.stderr).not.toContain('error:');
    expect(reindexed.code).toBe(0);
    expect(JSON.parse(reindexed.stdout)).toEqual({ patterns: TASKS.length, model: 'renamed-model', dimension: 384 });

    const after = await startServer({ dataPath, env: { SERVICE_EMBEDDING_MODEL_PATH: otherModel } });
    started.push(after);
    const recall = await runCli(['recall', TASKS[1], '--limit', '1', '--readonly', '--url', after.url]);
    expect((JSON.parse(recall.stdout) as { matches: { pattern: { task: string } }[] }).matches[0].pattern.task).toBe(TASKS[1]);
    expect(await after.stop()).toEqual({ code: 0, signal: null });
  }, 120_000);
});
