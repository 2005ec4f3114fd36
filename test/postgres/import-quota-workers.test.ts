/**
 * A key's max_patterns holds for imports sent at once to `service serve --workers 2` on one
 * PostgreSQL database: every import batch is checked and written under the scope's advisory
 * lock in the database, so the two processes queue on it. (Without a gate inside the
 * processes the race is not forced here: test/api/import-quota-race.test.ts forces it with two
 * apps in one process; this one runs the real binary and its workers.)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';

const hasPg = await requirePostgres('import quota with two workers');
const built = existsSync(join(BIN, '..', '..', 'dist', 'commands', 'main.js'));
if (!built) {
  if (process.env.CI && process.env.CI !== 'false') throw new Error('dist/ is missing: `npm test` builds it first');
  console.warn('\n[skip] import quota with two workers: run `npm run build` first (the test spawns bin/service.js).\n');
}

const TOKEN = 'import-quota-bootstrap-token-0123456789abcdef';

describe.skipIf(!hasPg || !built)('parallel imports under a key quota, serve --workers 2 (PostgreSQL)', () => {
  let db: TestDatabase;
  let schema: TestSchema;
  let dir: { path: string; remove(): Promise<void> };
  let server: ServerHandle | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('import_quota_workers');
    schema = await createMigratedSchema(db, 'workers');
    dir = await tempDir('svc-import-quota-workers-');
    server = await startServer({
      dataPath: dir.path,
      args: ['--workers', '2'],
      env: {
        SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url, SERVICE_AUTH_MODE: 'db', SERVICE_BOOTSTRAP_TOKEN: TOKEN,
        SERVICE_RATE_LIMIT_DEFAULT: '1000000', SERVICE_RATE_LIMIT_EXPENSIVE: '1000000', SERVICE_RATE_LIMIT_PER_KEY: '1000000',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await dir?.remove();
    await db?.drop();
  });

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server!.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('12 imports of 3 records at once under max_patterns 3: 3 stored, one 200, eleven 429 with their counts', async () => {
    const owner = await post('/v1/keys/bootstrap', { token: TOKEN });
    expect(owner.status).toBe(201);
    const limited = await post('/v1/keys', { name: 'limited', role: 'editor', max_patterns: 3 }, { authorization: `Bearer ${owner.body.secret as string}` });
    expect(limited.status).toBe(201);
    const auth = { authorization: `Bearer ${limited.body.secret as string}` };

    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => post('/v1/import', {
      records: Array.from({ length: 3 }, (__, j) => ({ key: `patterns/w${i}r${j}`, task: `worker import ${i} record ${j}`, code: `f${j}()`, eval_score: 5 })),
    }, auth)));

    const stored = await adminQuery('SELECT count(*)::int AS n FROM patterns', [], schema.url);
    expect((stored.rows[0] as { n: number }).n).toBe(3);
    expect(answers.filter((a) => a.status === 200).map((a) => a.body)).toEqual([{ imported: 3, skipped: 0, total: 3 }]);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(11);
    for (const a of refused) expect(a.body).toMatchObject({ code: 'quota_exceeded', current: 3, limit: 3, imported: 0, skipped: 0, total: 3 });
    // Two worker processes were serving the port.
    expect([...server!.stderr().matchAll(/^worker (\d+) listening$/gm)]).toHaveLength(2);
  }, 120_000);
});
