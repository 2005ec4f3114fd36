/**
 * PostgreSQL for tests. Each test file gets its own database (created here, dropped after),
 * and can carve further isolated schemas out of it. When no server answers:
 * - with CI set, the suite FAILS (CI provisions PostgreSQL; a silent skip would hide that);
 * - otherwise the tests are skipped with a visible message.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config/index.js';
import { migrateUp } from '../../src/adapters/migrations/index.js';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import type { Storage } from '../../src/ports/storage.js';

export const PG_ADMIN_URL = process.env.SERVICE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let reachable: Promise<string | null> | null = null;

/** null when the admin database answers, else why not. */
function probe(): Promise<string | null> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return null;
    } catch (err) {
      return (err as Error).message || String(err);
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/**
 * Call at the top of a test file: `const hasPg = await requirePostgres('file name')`, then
 * `describe.skipIf(!hasPg)(…)`. Throws (failing the file) in CI when PostgreSQL is missing.
 */
export async function requirePostgres(label: string): Promise<boolean> {
  const problem = await probe();
  if (problem === null) return true;
  const message = `PostgreSQL is not reachable at ${PG_ADMIN_URL} (${problem})`;
  if (process.env.CI && process.env.CI !== 'false') {
    throw new Error(`${message}: CI must provide it (run scripts/setup-postgres.sh)`);
  }
  console.warn(`\n[skip] ${label}: ${message}. Start PostgreSQL 15 with pgvector to run these tests.\n`);
  return false;
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** A URL whose connections see `schema` first (then public, where pgvector's types live). */
export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema},public`);
  return u.toString();
}

export async function adminQuery(sql: string, params: unknown[] = [], url = PG_ADMIN_URL): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

function uniqueName(prefix: string): string {
  const clean = prefix.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 30);
  return `t_${clean}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Drops a test database. A pool's end() resolves before its sockets are closed, so sessions
 * may linger for a moment: wait for them (killing them would surface as errors in the
 * closing clients), and only force after a few seconds.
 */
async function dropDatabase(name: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      await adminQuery(`DROP DATABASE IF EXISTS "${name}"`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '55006') throw err; // 55006: still in use
      await sleep(100);
    }
  }
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

export interface TestDatabase {
  name: string;
  url: string;
  /** Drops the database, closing any connection still open to it. */
  drop(): Promise<void>;
}

/** Creates an empty, uniquely named database (vector extension installed, no migrations). */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const name = uniqueName(prefix);
  await adminQuery(`CREATE DATABASE "${name}"`);
  const url = withDatabase(PG_ADMIN_URL, name);
  await adminQuery('CREATE EXTENSION IF NOT EXISTS vector', [], url);
  return {
    name,
    url,
    async drop() {
      await dropDatabase(name);
    },
  };
}

export interface TestSchema {
  url: string;
  schema: string;
  drop(): Promise<void>;
}

/** A fresh schema in `db`, migrated to the latest revision, with a URL that targets it. */
export async function createMigratedSchema(db: TestDatabase, prefix = 's'): Promise<TestSchema> {
  const schema = uniqueName(prefix);
  await adminQuery(`CREATE SCHEMA "${schema}"`, [], db.url);
  const url = withSearchPath(db.url, schema);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await migrateUp(pool);
  } finally {
    await pool.end();
  }
  return {
    url,
    schema,
    async drop() {
      await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`, [], db.url);
    },
  };
}

export interface SeededStorage {
  storage: Storage;
  /** Closes the storage and drops its database. */
  drop(): Promise<void>;
}

/**
 * A database of its own with one migrated schema, `seed` run on it (one connection: rows
 * written by SQL, as a test wants them, hundreds at once), then a PostgreSQL storage on it.
 */
export async function seededStorage(prefix: string, seed: (pool: pg.Pool) => Promise<unknown>): Promise<SeededStorage> {
  const db = await createTestDatabase(prefix);
  try {
    const schema = await createMigratedSchema(db);
    const pool = new pg.Pool({ connectionString: schema.url, max: 1 });
    try {
      await seed(pool);
    } finally {
      await pool.end();
    }
    const storage = await createPostgresStorage(pgConfig(schema.url));
    return {
      storage,
      async drop() {
        await storage.close();
        await db.drop();
      },
    };
  } catch (err) {
    await db.drop();
    throw err;
  }
}

/**
 * One migrated schema handed out again and again, emptied before each reuse: a fresh schema
 * per test costs half a second of DDL; deleting the rows of tiny tables costs milliseconds.
 * For suites whose tests run one after another (the tests of one file do).
 */
export function reusableSchema(db: () => Promise<TestDatabase>, prefix = 'reused'): { next(): Promise<TestSchema> } {
  let schema: TestSchema | null = null;
  return {
    async next() {
      if (!schema) {
        schema = await createMigratedSchema(await db(), prefix);
        return schema;
      }
      const tables = await adminQuery(
        "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> 'schema_migrations'",
        [schema.schema],
        (await db()).url,
      );
      const deletes = tables.rows.map((r: { tablename: string }) => `DELETE FROM "${schema!.schema}"."${r.tablename}";`);
      await adminQuery(deletes.join('\n'), [], (await db()).url);
      return schema;
    },
  };
}

/** A Config for PostgreSQL storage at `url` (everything else default). */
export function pgConfig(url: string, extra: Record<string, string> = {}): Config {
  return loadConfig({ SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: url, SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true', ...extra });
}
