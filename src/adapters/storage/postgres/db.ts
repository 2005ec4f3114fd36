import pg from 'pg';
import type { PoolClient, QueryResult, QueryResultRow } from 'pg';
import { ConflictError, StorageUnavailableError } from '../../../core/errors.js';
import type { Instruments, Logger } from '../../../ports/observability.js';

/** What a repository needs to run SQL: the pool or one transaction's client. */
export interface Queryer {
  query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
}

export interface PoolSettings {
  connectionString: string;
  max: number;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  /** Session settings every new connection runs before its first query (e.g. search planner settings). */
  sessionSql?: string;
}

// SQLSTATE classes/codes meaning "the server is gone or not accepting us right now".
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);
// node-postgres reports dropped sockets and pool timeouts as plain Errors without a code.
const UNAVAILABLE_MESSAGES = /Connection terminated|Connection ended|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Query read timeout/i;

/** True when `err` means the database is unreachable (as opposed to a bad query). */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code)) return true;
  }
  if (err instanceof AggregateError) return err.errors.some(isConnectionError);
  return UNAVAILABLE_MESSAGES.test(err.message);
}

/** Turns driver errors into the domain errors the edges know (503 for an unreachable DB). */
export function mapDbError(err: unknown, operation: string): unknown {
  if (isConnectionError(err)) {
    return new StorageUnavailableError(`storage unavailable: PostgreSQL cannot be reached (${(err as Error).message || 'connection lost'})`, { cause: err });
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (code === '57014') return new StorageUnavailableError(`storage timed out during ${operation}`, { cause: err });
  if (code === '23505') return new ConflictError(`${operation}: record already exists`);
  return err;
}

/** The connection string without its password, for messages and logs. */
export function describeUrl(connectionString: string): string {
  try {
    const u = new URL(connectionString);
    u.password = '';
    return `${u.host}${u.pathname}`;
  } catch {
    return 'the configured database';
  }
}

export function createPool(settings: PoolSettings, logger: Logger): pg.Pool {
  const { sessionSql } = settings;
  const pool = new pg.Pool({
    connectionString: settings.connectionString,
    max: settings.max,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'agent-memory-service',
    // pg-pool awaits the promise before handing a new connection out; a failure fails that checkout.
    ...(sessionSql ? { onConnect: async (client: pg.ClientBase) => { await client.query(sessionSql); } } : {}),
    ...(settings.statementTimeoutMs > 0
      ? {
          statement_timeout: settings.statementTimeoutMs,
          // Client-side backstop for a server that stops answering without closing the socket.
          query_timeout: settings.statementTimeoutMs + 5_000,
        }
      : {}),
  });
  // Idle clients emit 'error' when the server restarts; without a listener Node would crash.
  // The pool discards such clients and opens fresh ones on the next checkout.
  pool.on('error', (err) => logger.warn({ err: err.message }, 'idle PostgreSQL connection lost'));
  return pool;
}

/**
 * Named prepared statements, one name per distinct SQL text in this process: node-postgres
 * parses a named statement once per connection and afterwards sends only Bind/Execute, so
 * PostgreSQL skips parsing and, once it settles on a generic plan, planning. A name never
 * changes its text (node-postgres refuses that), so names come from this map. The texts are
 * the service's own statements (a bounded set: search statements vary only by filter shape,
 * dimension and eval window), and the map is capped in case that ever stops being true.
 */
const PREPARED_MAX = 256;
const preparedNames = new Map<string, string>();

function preparedName(sql: string): string | undefined {
  let name = preparedNames.get(sql);
  if (name === undefined && preparedNames.size < PREPARED_MAX) {
    name = `svc_${preparedNames.size}`;
    preparedNames.set(sql, name);
  }
  return name;
}

/** Pool plus timing, error mapping and transactions. */
export class Db implements Queryer {
  constructor(
    readonly pool: pg.Pool,
    private readonly instruments: Instruments,
  ) {}

  /**
   * Runs one statement on any pooled connection. `prepare`: as a named prepared statement
   * (the hot paths: recall's search and record, learn's statements).
   */
  async query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[], operation = 'query', prepare = false): Promise<QueryResult<R>> {
    const started = performance.now();
    try {
      const name = prepare ? preparedName(sql) : undefined;
      if (name !== undefined) return await this.pool.query<R>({ name, text: sql, values: params });
      return await this.pool.query<R>(sql, params);
    } catch (err) {
      throw mapDbError(err, operation);
    } finally {
      this.instruments.storageOp('postgres', operation, (performance.now() - started) / 1000);
    }
  }

  /**
   * Runs `fn` inside BEGIN … COMMIT on one connection; rolls back on any error. `setup` is
   * sent with the BEGIN in one round trip (e.g. SET LOCAL planner settings).
   */
  async tx<T>(operation: string, fn: (q: Queryer) => Promise<T>, setup = ''): Promise<T> {
    const started = performance.now();
    let client: PoolClient | null = null;
    let broken: unknown = undefined;
    try {
      client = await this.pool.connect();
      await client.query(setup ? `BEGIN; ${setup}` : 'BEGIN');
      try {
        const out = await fn(client);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    } catch (err) {
      // A connection that failed mid-transaction must not go back to the pool.
      if (isConnectionError(err)) broken = err;
      throw mapDbError(err, operation);
    } finally {
      client?.release(broken instanceof Error ? broken : undefined);
      this.instruments.storageOp('postgres', operation, (performance.now() - started) / 1000);
    }
  }
}
