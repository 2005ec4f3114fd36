/**
 * One composition root, one pool: with PostgreSQL storage in DB auth mode, createApp opens a
 * single pg pool that the storage and the key store share, so SERVICE_DB_POOL_MAX bounds the
 * server's connections. Counted where it cannot be faked: the sessions PostgreSQL itself lists
 * for the test's own database under the pool's application name.
 *
 * With SERVICE_DB_POOL_MAX=1, one pool can never hold more than one session. Using the key
 * store and the storage right before counting leaves each pool that served them with its
 * connection open (idle connections stay 30 s), so two pools would show two sessions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { dbEnv } from '../api/db-auth-helpers.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';

const hasPg = await requirePostgres('one PostgreSQL pool per app');

/** Sessions of the service's pools in `database` (the jobs listener names itself apart). */
async function poolSessions(database: string): Promise<number> {
  const res = await adminQuery(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'agent-memory-service'",
    [database],
  );
  return (res.rows[0] as { n: number }).n;
}

describe.skipIf(!hasPg)('one PostgreSQL pool', () => {
  let db: TestDatabase;
  let schema: TestSchema;

  beforeAll(async () => {
    db = await createTestDatabase('onepool');
    schema = await createMigratedSchema(db, 'onepool');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('PostgreSQL storage and the DB-mode key store work on the same pool', async () => {
    const app = await createApp(loadConfig(dbEnv(schema.url, { SERVICE_DB_POOL_MAX: '1' })), {}, { runJobs: false });
    try {
      const { keyStore, storage } = app.deps;
      expect(storage.kind).toBe('postgres');
      expect(keyStore).not.toBeNull();
      expect(await keyStore!.tenants.anyKeyExists()).toBe(false);
      await storage.ping();
      expect(await poolSessions(db.name)).toBe(1);
    } finally {
      await app.close();
    }
  });
});
