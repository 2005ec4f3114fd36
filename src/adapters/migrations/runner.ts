import type { Pool, PoolClient } from 'pg';
import { loadMigrations, parseRevision, readMigrationSql, revisionLabel, type Migration } from './files.js';

/**
 * Applies the numbered SQL migrations. Every run holds a session advisory lock for its whole
 * duration, so two `service migrate` processes against one database serialise: the second
 * waits, then finds nothing left to do. Each migration runs in its own transaction together
 * with its schema_migrations row, so a failure leaves the previous revision intact.
 */

// Arbitrary constant that names "the service's migrations" among advisory locks (which are
// per database, so separate databases never block each other).
const MIGRATION_LOCK_KEY = 724_519_330_017;

export interface MigrationOptions {
  /** Folder holding the SQL files (default: the package's migrations/). */
  dir?: string;
  /** A revision (`0001`, `0001_init`; `0` = none): where up or down stops. */
  to?: string;
  /** Called before each migration runs, e.g. to print progress. */
  onStep?: (direction: 'up' | 'down', label: string) => void;
}

export interface RevisionStatus {
  version: number;
  label: string;
  applied_at: string | null;
}

export interface SchemaStatus {
  migrations: RevisionStatus[];
  /** Applied versions with no file in this build (the database is newer than the code). */
  unknown: string[];
  current: string | null;
  latest: string | null;
  pending: string[];
}

async function withLock<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // The server ending this session (restart, pg_terminate_backend) emits 'error' on the client,
  // which pg-pool does not listen to while it is checked out: without a listener it would end
  // the process instead of failing the statement in flight (which reports the loss).
  let lost: Error | null = null;
  const onError = (err: Error) => {
    lost ??= err;
  };
  client.on('error', onError);
  try {
    // Index builds on big tables may exceed a service-wide statement timeout.
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now())`);
      return await fn(client);
    } finally {
      // A lost connection drops the lock anyway; don't hide the original error behind this one.
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    // A broken connection is discarded (release with the error), never reused.
    if (!lost) client.removeListener('error', onError);
    client.release(lost ?? undefined);
  }
}

async function appliedVersions(db: Pool | PoolClient): Promise<Map<number, { name: string; applied_at: Date }>> {
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  const out = new Map<number, { name: string; applied_at: Date }>();
  if (exists.rows[0].t === null) return out;
  const res = await db.query<{ version: number; name: string; applied_at: Date }>(
    'SELECT version, name, applied_at FROM schema_migrations ORDER BY version',
  );
  for (const r of res.rows) out.set(r.version, { name: r.name, applied_at: r.applied_at });
  return out;
}

async function runInTransaction(client: PoolClient, sql: string, bookkeeping: [string, unknown[]]): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(sql);
    await client.query(bookkeeping[0], bookkeeping[1]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Applies pending migrations in order (up to `to` when given); returns the labels applied. */
export async function migrateUp(pool: Pool, opts: MigrationOptions = {}): Promise<string[]> {
  const migrations = await loadMigrations(opts.dir);
  const target = opts.to === undefined ? Infinity : parseRevision(opts.to, migrations);
  return withLock(pool, async (client) => {
    const applied = await appliedVersions(client);
    const done: string[] = [];
    for (const m of migrations) {
      if (m.version > target || applied.has(m.version)) continue;
      const label = revisionLabel(m);
      opts.onStep?.('up', label);
      await runStep(client, m, 'up', label);
      done.push(label);
    }
    return done;
  });
}

/** Reverts the newest applied migration, or every one above `to`; returns the labels reverted. */
export async function migrateDown(pool: Pool, opts: MigrationOptions = {}): Promise<string[]> {
  const migrations = await loadMigrations(opts.dir);
  const target = opts.to === undefined ? null : parseRevision(opts.to, migrations);
  return withLock(pool, async (client) => {
    const applied = [...(await appliedVersions(client)).keys()].sort((a, b) => b - a);
    const toRevert = target === null ? applied.slice(0, 1) : applied.filter((v) => v > target);
    const done: string[] = [];
    for (const version of toRevert) {
      const m = migrations.find((x) => x.version === version);
      if (!m) throw new Error(`cannot revert version ${version}: this build has no migration file for it`);
      const label = revisionLabel(m);
      opts.onStep?.('down', label);
      await runStep(client, m, 'down', label);
      done.push(label);
    }
    return done;
  });
}

async function runStep(client: PoolClient, m: Migration, direction: 'up' | 'down', label: string): Promise<void> {
  const sql = await readMigrationSql(direction === 'up' ? m.upPath : m.downPath);
  const bookkeeping: [string, unknown[]] = direction === 'up'
    ? ['INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]]
    : ['DELETE FROM schema_migrations WHERE version = $1', [m.version]];
  try {
    await runInTransaction(client, sql, bookkeeping);
  } catch (err) {
    throw new Error(`migration ${label} (${direction}) failed: ${(err as Error).message}`, { cause: err });
  }
}

/** Read-only: which migrations are applied, which are pending. Never creates tables. */
export async function migrationStatus(pool: Pool, opts: Pick<MigrationOptions, 'dir'> = {}): Promise<SchemaStatus> {
  const migrations = await loadMigrations(opts.dir);
  const applied = await appliedVersions(pool);
  const known = new Set(migrations.map((m) => m.version));
  const rows = migrations.map((m) => ({
    version: m.version,
    label: revisionLabel(m),
    applied_at: applied.get(m.version)?.applied_at.toISOString() ?? null,
  }));
  const appliedRows = rows.filter((r) => r.applied_at !== null);
  return {
    migrations: rows,
    unknown: [...applied].filter(([v]) => !known.has(v)).map(([v, r]) => revisionLabel({ version: v, name: r.name })),
    current: appliedRows.length ? appliedRows[appliedRows.length - 1].label : null,
    latest: rows.length ? rows[rows.length - 1].label : null,
    pending: rows.filter((r) => r.applied_at === null).map((r) => r.label),
  };
}

/** Throws an Error naming `service migrate up` unless every migration of this build is applied. */
export async function assertSchemaCurrent(pool: Pool, opts: Pick<MigrationOptions, 'dir'> = {}): Promise<SchemaStatus> {
  const status = await migrationStatus(pool, opts);
  if (status.pending.length > 0) {
    throw new Error(
      `database schema is outdated (current: ${status.current ?? 'none'}, latest: ${status.latest}; ` +
      `pending: ${status.pending.join(', ')}): run \`service migrate up\``,
    );
  }
  return status;
}
