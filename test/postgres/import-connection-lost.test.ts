/**
 * An import cut by lost PostgreSQL connections answers 503 with exactly what it wrote: the
 * `imported`/`skipped` counts and the last record written, as stored. The cut is placed, not
 * timed: a trigger makes the insert of record 200 wait on an advisory lock the test holds;
 * once a backend is seen waiting there, every other backend of the test database is
 * terminated (pg_terminate_backend), then the lock is released.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../server/app.js';
import { createApp, type App } from '../../src/app.js';
import { testConfig } from '../api/helpers.js';
import { tempDir } from '../support/env.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';

const hasPg = await requirePostgres('import cut by lost connections');
const HOLD = 4_242_001;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(!hasPg)('import cut by lost PostgreSQL connections', () => {
  let db: TestDatabase;
  let schema: TestSchema;
  let app: App;
  let server: Awaited<ReturnType<typeof buildServer>>;
  let data: { path: string; remove(): Promise<void> };

  beforeAll(async () => {
    db = await createTestDatabase('import_cut');
    schema = await createMigratedSchema(db, 'import_cut');
    await adminQuery(
      `CREATE FUNCTION ${schema.schema}.hold_record_200() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN PERFORM pg_advisory_xact_lock(${HOLD}); RETURN NEW; END $$;
       CREATE TRIGGER hold_record_200 BEFORE INSERT ON ${schema.schema}.patterns
         FOR EACH ROW WHEN (NEW.task LIKE '% number 200') EXECUTE FUNCTION ${schema.schema}.hold_record_200();`,
      [], schema.url,
    );
    data = await tempDir('svc-pg-import-cut-');
    app = await createApp(testConfig(data.path, { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url }));
    server = await buildServer(app);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await app?.close();
    await data?.remove();
    await db?.drop();
  });

  it('503 storage_unavailable carrying the exact counts and the last record written, as stored', async () => {
    const records = Array.from({ length: 300 }, (_, i) => ({ key: `patterns/cut${i}`, task: `imported task number ${i}`, code: `f${i}()`, eval_score: 5 }));
    const holder = new pg.Client({ connectionString: schema.url, application_name: 'import-cut-test' });
    await holder.connect();
    try {
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await holder.query('SELECT pg_advisory_lock($1)', [HOLD]);
      const answer = server.inject({
        method: 'POST', url: '/v1/import', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ records }),
      });
      // Batches of 64: records 0-191 are committed when the fourth batch's insert of record 200 waits.
      await until('the insert of record 200 to wait on the held lock', async () => {
        const res = await adminQuery(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = $1 AND pid <> $2 AND wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE 'INSERT INTO patterns%'`,
          [db.name, holderPid],
        );
        return (res.rows[0] as { n: number }).n > 0 ? true : undefined;
      });
      const killed = await adminQuery(
        `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
         WHERE datname = $1 AND pid <> $2 AND pid <> pg_backend_pid()`,
        [db.name, holderPid],
      );
      expect((killed.rows[0] as { n: number }).n).toBeGreaterThan(0);
      await holder.query('SELECT pg_advisory_unlock($1)', [HOLD]);

      const res = await answer;
      expect(res.statusCode).toBe(503);
      const body = res.json();
      expect(body).toMatchObject({
        code: 'storage_unavailable', imported: 192, skipped: 0, total: 300, last_written: { index: 191, key: 'patterns/cut191' },
      });
      expect(body.detail).toMatch(/192 of 300 records were written \(0 skipped\), none of the rest/);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);

      // The counts are what is stored: records 0-191, nothing of the cut batch.
      const stored = await holder.query<{ id: string }>('SELECT id FROM patterns ORDER BY id');
      const expected = records.slice(0, 192).map((r) => r.key.slice('patterns/'.length)).sort();
      expect(stored.rows.map((r) => r.id).sort()).toEqual(expected);
    } finally {
      await holder.end();
    }
  });
});
