/**
 * Two real `service serve` processes on one PostgreSQL database: what one learns, the other
 * recalls, and both see the same counts. (Runs the built binary, like the CLI tests.)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';

const hasPg = await requirePostgres('two servers on one database');
const built = existsSync(join(BIN, '..', '..', 'dist', 'commands', 'main.js'));
if (!built) {
  if (process.env.CI && process.env.CI !== 'false') throw new Error('dist/ is missing: `npm test` builds it first');
  console.warn('\n[skip] two servers on one database: run `npm run build` first (the test spawns bin/service.js).\n');
}

const TASK = 'Parse a CSV file and compute the average of the price column';

// Loosely typed on purpose: the assertions below check the shapes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function call(server: ServerHandle, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe.skipIf(!hasPg || !built)('two servers, one PostgreSQL database', () => {
  let db: TestDatabase;
  let dirs: { remove(): Promise<void> }[] = [];
  let one: ServerHandle;
  let two: ServerHandle;

  beforeAll(async () => {
    db = await createTestDatabase('two_servers');
    const schema = await createMigratedSchema(db, 'shared');
    const env = {
      SERVICE_STORAGE: 'postgres',
      SERVICE_DATABASE_URL: schema.url,
      SERVICE_AUTH_MODE: 'dev',
      SERVICE_ALLOW_NO_AUTH: 'true',
    };
    const [a, b] = await Promise.all([tempDir('svc-pg-two-'), tempDir('svc-pg-two-')]);
    dirs = [a, b];
    // Both start at once: the same database, and no JSON lock to keep the second one out.
    [one, two] = await Promise.all([startServer({ dataPath: a.path, env }), startServer({ dataPath: b.path, env })]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    for (const d of dirs) await d.remove();
    await db?.drop();
  });

  it('learns on one server and recalls on the other', async () => {
    const learned = await call(one, 'POST', '/v1/learn', { task: TASK, code: 'import csv\n# average the price column', eval_score: 8.5 });
    expect(learned.status).toBe(200);
    expect(learned.body).toMatchObject({ stored: true, pattern_count: 1 });

    const recalled = await call(two, 'POST', '/v1/recall', { task: TASK, limit: 3 });
    expect(recalled.status).toBe(200);
    expect(recalled.body.matches).toHaveLength(1);
    expect(recalled.body.matches[0]).toMatchObject({ reuse_tier: 'duplicate', pattern_key: learned.body.pattern_key });
    expect(recalled.body.matches[0].pattern).toMatchObject({ task: TASK, reuse_count: 0 });

    // The reuse recorded by server two is what server one reads back, once server two's
    // bookkeeping batch is written (docs/behavior.md "Recall bookkeeping": milliseconds).
    await expect
      .poll(async () => (await call(one, 'GET', `/v1/recall?task=${encodeURIComponent(TASK)}`)).body.matches[0].pattern.reuse_count, { timeout: 20_000 })
      .toBe(1);
  });

  it('both report the same pattern count and storage kind', async () => {
    const other = await call(two, 'POST', '/v1/learn', { task: 'Resize every PNG image in a folder to 200 pixels wide', code: 'resize()', eval_score: 7 });
    expect(other.body).toMatchObject({ stored: true, pattern_count: 2 });
    for (const server of [one, two]) {
      const health = await call(server, 'GET', '/v1/health');
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok', storage: 'postgres', pattern_count: 2 });
    }
  });
});
