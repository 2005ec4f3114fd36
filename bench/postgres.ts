import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateUp } from '../src/adapters/migrations/index.js';
import { createPostgresStorage } from '../src/adapters/storage/postgres/index.js';
import { loadConfig, type Config } from '../src/config/index.js';
import type { Storage } from '../src/ports/storage.js';
import type { BenchStorage } from './storages.js';

/** The local server the tests use, when SERVICE_DATABASE_URL does not name one. */
const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** `url` with its database replaced. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** One statement on a connection of its own (CREATE/DROP DATABASE cannot run in a pool's transaction). */
export async function admin(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * `npm run bench -- --storage postgres`: a fresh database per size on the server named by
 * SERVICE_DATABASE_URL (its own database is left alone; the role must be allowed to create
 * databases), migrated to the latest schema, dropped afterwards. Size is pg_database_size,
 * which includes the HNSW indexes and the migration's empty tables.
 */
export async function openPostgresStorage(): Promise<BenchStorage> {
  const config = loadConfig();
  const serverUrl = config.storage.databaseUrl ?? DEFAULT_SERVER_URL;
  const name = `service_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(serverUrl, `CREATE DATABASE "${name}"`);
  const url = withDatabase(serverUrl, name);
  const remove = () => admin(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).then(() => undefined);
  try {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await migrateUp(pool);
    } finally {
      await pool.end();
    }
    const storage = await createPostgresStorage({ ...config, storage: { ...config.storage, kind: 'postgres', databaseUrl: url } });
    const host = new URL(serverUrl).host;
    return {
      storage,
      label: `postgres (database ${name} on ${host}, dropped after)`,
      serverEnv: { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: url },
      bulkLoad: (fill) => bulkLoad(config, url, name, fill),
      sizeBytes: async () => Number((await admin(serverUrl, `SELECT pg_database_size('${name}') AS n`)).rows[0].n),
      close: () => storage.close(),
      remove,
    };
  } catch (err) {
    await remove().catch(() => undefined);
    throw err;
  }
}

/**
 * A bulk fill for the HTTP benchmark, which measures the filled store, not the filling:
 * - Inserting into an HNSW index row by row costs a graph walk each; building it once over the
 *   filled table is many times faster. The migration's own index definitions are dropped and
 *   re-created verbatim, so the served store has exactly the schema `service migrate up` makes.
 * - The fill's connections commit asynchronously (a database default set for the fill only;
 *   the storage it writes through is opened after it and closed before it is reset).
 */
async function bulkLoad(config: Config, url: string, name: string, fill: (storage: Storage) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query<{ name: string; def: string }>(
      "SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'patterns' AND indexdef ILIKE '%USING hnsw%'",
    );
    for (const index of res.rows) await client.query(`DROP INDEX "${index.name}"`);
    await client.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
    const storage = await createPostgresStorage({ ...config, storage: { ...config.storage, kind: 'postgres', databaseUrl: url, db: { ...config.storage.db, poolMax: 16 } } });
    try {
      await fill(storage);
    } finally {
      await storage.close();
      await client.query(`ALTER DATABASE "${name}" RESET synchronous_commit`);
    }
    await client.query("SET maintenance_work_mem = '256MB'");
    for (const index of res.rows) await client.query(index.def);
    await client.query('ANALYZE patterns');
  } finally {
    await client.end();
  }
}
