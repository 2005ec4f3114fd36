import type pg from 'pg';
import type { Config } from '../../../config/index.js';
import { ConfigError } from '../../../config/index.js';
import { StorageUnavailableError } from '../../../core/errors.js';
import { silentLogger } from '../../../ports/observability.js';
import { createPool, describeUrl, isConnectionError } from './db.js';

/**
 * A small pool for maintenance commands (migrate, migrate-data; here rather than in migrations/,
 * which storage/postgres uses for its schema check, so the two do not import each other), checked with one round trip
 * so an unreachable server fails up front with a message naming it (never the password).
 */
export async function openMaintenancePool(config: Config, purpose: string): Promise<pg.Pool> {
  if (!config.storage.databaseUrl) throw new ConfigError('SERVICE_DATABASE_URL', `required for \`service ${purpose}\``);
  const pool = createPool(
    { connectionString: config.storage.databaseUrl, max: 2, statementTimeoutMs: 0, connectTimeoutMs: config.storage.db.connectTimeoutMs },
    silentLogger,
  );
  try {
    await pool.query('SELECT 1');
    return pool;
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (isConnectionError(err)) {
      throw new StorageUnavailableError(`cannot connect to PostgreSQL at ${describeUrl(config.storage.databaseUrl)}: ${(err as Error).message}`, { cause: err });
    }
    throw err;
  }
}
