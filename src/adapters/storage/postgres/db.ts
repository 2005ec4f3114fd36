import pg from 'pg';
import type { PoolClient, QueryResult, QueryResultRow } from 'pg';
import { ConflictError, DomainError, StorageUnavailableError } from '../../../core/errors.js';
import { silentLogger, type Instruments, type Logger } from '../../../ports/observability.js';

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

/**
 * A statement that only reads: running it twice is harmless, so a connection lost under it
 * is retried once. Conservative on purpose: anything but a plain SELECT (a CTE may write,
 * `FOR UPDATE` locks, these functions have effects) counts as a write.
 */
export function isReadOnlyStatement(sql: string): boolean {
  return /^\s*SELECT\b/i.test(sql) && !/\b(pg_notify|nextval|setval|pg_advisory\w*|FOR\s+(UPDATE|SHARE|NO\s+KEY|KEY))\b/i.test(sql);
}

/**
 * One pooled connection, with an 'error' listener for the whole checkout: node-postgres emits
 * 'error' on a checked-out client whose server ends the session (pg_terminate_backend, a
 * restart, a network reset), and pg-pool only listens while the client is idle, so without
 * this an unhandled 'error' event would end the process.
 */
class Checkout {
  private lostWith: Error | null = null;
  private released = false;
  private readonly onError = (err: Error) => {
    this.lostWith ??= err;
  };

  private constructor(readonly client: PoolClient) {
    client.on('error', this.onError);
  }

  static async open(pool: pg.Pool): Promise<Checkout> {
    return new Checkout(await pool.connect());
  }

  /** The error that broke the connection while it was checked out, if any. */
  get lost(): Error | null {
    return this.lostWith;
  }

  /**
   * Back to the pool, or discarded when the connection broke (`err` a connection error, or
   * the server ended it): a broken connection is never handed out again.
   */
  release(err?: unknown): void {
    if (this.released) return;
    this.released = true;
    const broken = this.lostWith ?? (isConnectionError(err) ? (err as Error) : null);
    if (broken) {
      // Our listener stays: the discarded client may still emit while it closes.
      this.client.release(broken);
      return;
    }
    this.client.removeListener('error', this.onError);
    this.client.release();
  }
}

/** A failed Db.attempt: `cause` is the mapped error; `repeatable` says whether trying again is safe. */
export class AttemptError extends Error {
  constructor(
    cause: unknown,
    readonly repeatable: boolean,
  ) {
    super((cause as Error)?.message ?? String(cause), { cause });
    this.name = 'AttemptError';
  }
}

export interface TxOptions {
  /** `fn` only reads: a connection lost under it is retried once on a fresh connection. */
  readOnly?: boolean;
}

/** Pool plus timing, error mapping, transactions and the retry of reads on a lost connection. */
export class Db implements Queryer {
  constructor(
    readonly pool: pg.Pool,
    private readonly instruments: Instruments,
    private readonly logger: Logger = silentLogger,
  ) {}

  /**
   * Runs one statement on any pooled connection (a read is retried once if its connection
   * breaks). `prepare`: as a named prepared statement (the hot paths: recall's search and
   * record, learn's statements).
   */
  async query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[], operation = 'query', prepare = false): Promise<QueryResult<R>> {
    const started = performance.now();
    try {
      const name = prepare ? preparedName(sql) : undefined;
      return await this.onConnection(operation, isReadOnlyStatement(sql), (client) =>
        name !== undefined ? client.query<R>({ name, text: sql, values: params }) : client.query<R>(sql, params));
    } catch (err) {
      throw mapDbError(err, operation);
    } finally {
      this.instruments.storageOp('postgres', operation, (performance.now() - started) / 1000);
    }
  }

  /**
   * Runs one statement once, no retry; a failure is an AttemptError saying whether running it
   * again is safe: the statement never reached the server (the checkout failed), or the server
   * refused it with an error of its own (rolled back). A connection lost under it leaves its
   * outcome unknown, and a caller that retries by itself (the recall bookkeeping queue) must not
   * repeat it.
   */
  async attempt<R extends QueryResultRow = QueryResultRow>(sql: string, params: unknown[], operation: string, prepare = false): Promise<QueryResult<R>> {
    const started = performance.now();
    let reached = false;
    try {
      const co = await Checkout.open(this.pool);
      reached = true;
      try {
        const name = prepare ? preparedName(sql) : undefined;
        const out = await (name !== undefined ? co.client.query<R>({ name, text: sql, values: params }) : co.client.query<R>(sql, params));
        co.release();
        return out;
      } catch (err) {
        co.release(err);
        // A client that already knew its connection was gone refuses without sending anything.
        if (/not queryable/i.test((err as Error).message)) reached = false;
        throw co.lost && !isConnectionError(err) ? co.lost : err;
      }
    } catch (err) {
      const refusedByServer = typeof (err as { code?: unknown }).code === 'string' && !isConnectionError(err) && !(err instanceof DomainError);
      throw new AttemptError(mapDbError(err, operation), !reached || refusedByServer);
    } finally {
      this.instruments.storageOp('postgres', operation, (performance.now() - started) / 1000);
    }
  }

  /**
   * Runs `fn` inside BEGIN … COMMIT on one connection; rolls back on any error. `setup` is
   * sent with the BEGIN in one round trip (e.g. SET LOCAL planner settings).
   */
  async tx<T>(operation: string, fn: (q: Queryer) => Promise<T>, setup = '', opts: TxOptions = {}): Promise<T> {
    const started = performance.now();
    try {
      return await this.onConnection(operation, opts.readOnly === true, async (client) => {
        await client.query(setup ? `BEGIN; ${setup}` : 'BEGIN');
        try {
          const out = await fn(client);
          await client.query('COMMIT');
          return out;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      });
    } catch (err) {
      throw mapDbError(err, operation);
    } finally {
      this.instruments.storageOp('postgres', operation, (performance.now() - started) / 1000);
    }
  }

  /**
   * Holds a transaction-level lock (`lockSql`, e.g. pg_advisory_xact_lock) on a connection of
   * its own while `fn` works on other pooled connections; the lock ends with that transaction.
   * Taking the lock is retried once on a fresh connection when its connection breaks. If the
   * connection breaks while `fn` runs, the lock is gone (the server released it), but `fn`'s
   * work was committed on its own connections: its outcome stands and the loss is logged; the
   * next caller locks again on a fresh connection.
   */
  async withLock<T>(operation: string, lockSql: string, params: unknown[], fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let held: Checkout;
    try {
      held = await this.retryOnce(operation, true, async () => {
        const co = await Checkout.open(this.pool);
        try {
          await co.client.query('BEGIN');
          await co.client.query(lockSql, params);
          return co;
        } catch (err) {
          await co.client.query('ROLLBACK').catch(() => undefined);
          co.release(err);
          throw co.lost ?? err;
        }
      });
    } catch (err) {
      this.instruments.storageOp('postgres', operation, (performance.now() - started) / 1000);
      throw mapDbError(err, operation);
    }
    try {
      return await fn();
    } finally {
      const ended = held.lost ? null : await held.client.query('COMMIT').then(() => null, (err: unknown) => err);
      if (held.lost || ended) {
        this.logger.warn({ operation, err: (held.lost ?? (ended as Error)).message }, 'the connection holding a lock was lost while its work ran; the work stands');
      }
      held.release(held.lost ?? ended ?? undefined);
      this.instruments.storageOp('postgres', operation, (performance.now() - started) / 1000);
    }
  }

  /** `work` on a checked-out connection, released (or discarded when broken) afterwards. */
  private onConnection<T>(operation: string, readOnly: boolean, work: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.retryOnce(operation, readOnly, async (reached) => {
      const co = await Checkout.open(this.pool);
      reached();
      try {
        const out = await work(co.client);
        co.release();
        return out;
      } catch (err) {
        co.release(err);
        // A statement error caused by the lost connection ("not queryable") reports the cause.
        throw co.lost && !isConnectionError(err) && !(err instanceof DomainError) ? co.lost : err;
      }
    });
  }

  /**
   * Runs `attempt`; when its connection fails and either nothing reached the server yet (the
   * checkout itself failed) or the work only reads, runs it once more on a fresh connection.
   * A write whose connection broke mid-way is not repeated: its outcome is unknown, and the
   * caller answers 503 so the client can decide.
   */
  private async retryOnce<T>(operation: string, readOnly: boolean, attempt: (reached: () => void) => Promise<T>): Promise<T> {
    let reached = false;
    try {
      return await attempt(() => (reached = true));
    } catch (err) {
      // A pool with no free slot in time is busy, not broken: trying again would only wait again.
      if (!isConnectionError(err) || /timeout/i.test((err as Error).message) || (reached && !readOnly)) throw err;
      this.logger.warn({ operation, err: (err as Error).message }, 'PostgreSQL connection lost; retrying once on a fresh connection');
      // A server restart or mass termination breaks the idle pooled connections too: let their
      // pending close events run first, so the pool drops them instead of handing one out.
      await new Promise((resolve) => setImmediate(resolve));
      return attempt(() => undefined);
    }
  }
}
