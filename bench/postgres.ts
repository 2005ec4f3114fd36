import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateUp } from '../src/adapters/migrations/index.js';
import { createPostgresStorage } from '../src/adapters/storage/postgres/index.js';
import { loadConfig } from '../src/config.js';
import type { BenchStorage } from './storages.js';

/** The local server the tests use, when SERVICE_DATABASE_URL does not name one. */
const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin(url: string, sql: string): Promise<pg.QueryResult> {
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
  const serverUrl = config.databaseUrl ?? DEFAULT_SERVER_URL;
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
    const storage = await createPostgresStorage({ ...config, storage: 'postgres', databaseUrl: url });
    const host = new URL(serverUrl).host;
    return {
      storage,
      label: `postgres (database ${name} on ${host}, dropped after)`,
      serverEnv: { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: url },
      sizeBytes: async () => Number((await admin(serverUrl, `SELECT pg_database_size('${name}') AS n`)).rows[0].n),
      close: () => storage.close(),
      remove,
    };
  } catch (err) {
    await remove().catch(() => undefined);
    throw err;
  }
}
