import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * GET /v1/recall carries the task in the query string, percent-encoded: a non-ASCII task
 * within the documented 10,000-character limit takes up to 9 bytes of URL per character
 * (a 3-byte character is 9; a 4-byte one, 12 for its two UTF-16 units). Node's default
 * 16 KiB header limit answered 431; the server's limit now fits the longest such request.
 */
let server: ServerHandle;
let dir: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  dir = await tempDir('svc-recall-get-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
});
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

const getRecall = (task: string) => fetch(`${server.url}/v1/recall?${new URLSearchParams({ task, limit: '1' })}`);

describe('GET /v1/recall with a long non-ASCII task', () => {
  it('answers 200 for 10,000 three-byte characters and for 5,000 four-byte ones (10,000 UTF-16 units)', async () => {
    for (const task of ['中'.repeat(10_000), '😀'.repeat(5_000)]) {
      const res = await getRecall(task);
      expect(res.status, `${task.length} units of ${task[0]}`).toBe(200);
      expect(await res.json()).toMatchObject({ matches: [] });
    }
  });

  it('a task over the limit is still a 422 naming task, not a 431', async () => {
    const res = await getRecall('中'.repeat(10_001));
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toMatch(/task/);
  });
});
