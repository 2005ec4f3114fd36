import type pg from 'pg';
import type { Config } from '../../../config/index.js';
import { StorageUnavailableError } from '../../../core/errors.js';
import type { Logger } from '../../../ports/observability.js';
import { createPool, describeUrl, isConnectionError } from './db.js';
import { SEARCH_SESSION_SQL } from './search.js';

/** A pg pool as src/app.ts hands it around (PostgreSQL storage and the key store share one). */
export type PostgresPool = pg.Pool;

/**
 * The pool of SERVICE_DATABASE_URL with the configured size and timeouts. `search` adds the
 * vector-search session settings every connection needs when it serves pattern storage; a
 * pool for the key store alone goes without them, so it never depends on pgvector's version.
 */
export function createServicePool(config: Config, opts: { logger: Logger; search: boolean }): PostgresPool {
  if (!config.storage.databaseUrl) throw new Error('SERVICE_DATABASE_URL is required for PostgreSQL');
  return createPool(
    {
      connectionString: config.storage.databaseUrl,
      max: config.storage.db.poolMax,
      statementTimeoutMs: config.storage.db.statementTimeoutMs,
      connectTimeoutMs: config.storage.db.connectTimeoutMs,
      ...(opts.search ? { sessionSql: SEARCH_SESSION_SQL } : {}),
    },
    opts.logger,
  );
}

/**
 * Runs a startup check on `pool`; an unreachable server becomes StorageUnavailableError (which
 * startup may wait out). A pool the caller opened just for this object is ended on failure;
 * a shared pool stays with its owner.
 */
export async function checkOnPool(pool: PostgresPool, owned: boolean, databaseUrl: string, check: () => Promise<unknown>): Promise<void> {
  try {
    await check();
  } catch (err) {
    if (owned) await pool.end().catch(() => undefined);
    if (isConnectionError(err)) {
      throw new StorageUnavailableError(`cannot connect to PostgreSQL at ${describeUrl(databaseUrl)}: ${(err as Error).message}`, { cause: err });
    }
    throw err;
  }
}
