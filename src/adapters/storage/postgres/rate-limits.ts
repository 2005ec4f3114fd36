import { GrantCache, LocalWindowCounts, rateWindow, type RateDecision, type RateWindow } from '../../../core/rate-window.js';
import type { Clock } from '../../../ports/clock.js';
import type { Instruments, Logger } from '../../../ports/observability.js';
import type { RateLimiter } from '../../../ports/rate-limiter.js';
import { createPool, Db } from './db.js';

/**
 * One decision, one statement: takes up to $3 grants from the bucket's count for the window,
 * never past the limit $4; at or past it, counts one more refusal (core stepCount, the same
 * rule in memory). `granted` is what this statement took.
 */
const STEP_SQL = `INSERT INTO rate_limit_windows AS w (bucket, window_start, hits, granted)
VALUES ($1, $2, least($3::int, $4::int), least($3::int, $4::int))
ON CONFLICT (bucket, window_start) DO UPDATE SET
  hits = CASE WHEN w.hits >= $4::int THEN w.hits + 1 ELSE least(w.hits + $3::int, $4::int) END,
  granted = CASE WHEN w.hits >= $4::int THEN 0 ELSE least($3::int, $4::int - w.hits) END
RETURNING hits, granted`;

const SWEEP_SQL = 'DELETE FROM rate_limit_windows WHERE window_start < $1';

/** After a failed or late statement, this long is decided by the process alone before asking again. */
export const FALLBACK_MS = 1_000;

/** The limiter's own connections: its statements never queue behind a slow recall or import. */
const POOL_SIZE = 2;

export interface PostgresRateLimiterOptions {
  connectionString: string;
  clock: Clock;
  logger: Logger;
  instruments: Instruments;
  windowMs: number;
  /** The longest a request waits for the shared count before the process decides alone. */
  timeoutMs: number;
  connectTimeoutMs: number;
}

/**
 * The limiter shared by every process on one database (docs/behavior.md "Rate limits"): the
 * pre-check (core GrantCache) admits from grants taken in blocks and refuses once a refusal is
 * on record; anything else is one upsert on rate_limit_windows. When that statement fails or
 * takes longer than `timeoutMs`, the process decides with its own count of the window (every
 * request it saw in it) for FALLBACK_MS, then asks again: the limit becomes per process for
 * that time, never a refusal or an error caused by the database.
 */
export function createPostgresRateLimiter(opts: PostgresRateLimiterOptions): RateLimiter {
  const pool = createPool(
    { connectionString: opts.connectionString, max: POOL_SIZE, statementTimeoutMs: opts.timeoutMs, connectTimeoutMs: opts.connectTimeoutMs },
    opts.logger,
  );
  return sharedRateLimiter(new Db(pool, opts.instruments, opts.logger), opts, () => pool.end());
}

/** The limiter over any Queryer (unit tests pass a fake one). */
export function sharedRateLimiter(
  db: Pick<Db, 'query'>,
  opts: Pick<PostgresRateLimiterOptions, 'clock' | 'logger' | 'windowMs' | 'timeoutMs'>,
  end: () => Promise<void> = () => Promise.resolve(),
): RateLimiter {
  const grants = new GrantCache();
  const local = new LocalWindowCounts();
  let fallbackUntil = 0;
  let sweptWindow = -1;

  const step = async (bucket: string, window: RateWindow, take: number, limit: number) => {
    const res = await db.query<{ hits: number; granted: number }>(STEP_SQL, [bucket, new Date(window.startMs), take, limit], 'rateLimit.step', true);
    return { count: res.rows[0].hits, granted: res.rows[0].granted };
  };

  const sweep = (window: RateWindow) => {
    if (window.index <= sweptWindow) return;
    sweptWindow = window.index;
    // Past windows are dead weight; every process tries once per window, any one is enough.
    void db.query(SWEEP_SQL, [new Date(window.startMs)], 'rateLimit.sweep').catch((err: unknown) => {
      opts.logger.warn({ err: (err as Error).message }, 'rate limit: past windows not deleted (next window tries again)');
    });
  };

  const fallBack = (err: unknown, now: number) => {
    if (now >= fallbackUntil) {
      opts.logger.warn({ err: (err as Error).message }, `rate limit: the shared count did not answer; this process decides alone for ${FALLBACK_MS} ms`);
    }
    fallbackUntil = now + FALLBACK_MS;
  };

  return {
    kind: 'postgres',
    async hit(bucket: string, limit: number): Promise<RateDecision> {
      const now = opts.clock.now().getTime();
      const window = rateWindow(now, opts.windowMs);
      // Counted always, so a process that has to decide alone starts from what it saw.
      const alone = local.hit(bucket, limit, window);
      const pre = grants.precheck(bucket, limit, window);
      if (pre.kind !== 'ask') return pre.decision;
      if (now < fallbackUntil) return alone;
      sweep(window);
      const answer = step(bucket, window, pre.take, limit);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), opts.timeoutMs);
      });
      try {
        const first = await Promise.race([answer, late]);
        if (first === 'late') {
          // A late answer still holds grants: keep them for the next requests.
          answer.then((a) => grants.record(bucket, limit, window, a), () => undefined);
          fallBack(new Error(`no answer within ${opts.timeoutMs} ms`), now);
          return alone;
        }
        return grants.record(bucket, limit, window, first);
      } catch (err) {
        fallBack(err, now);
        return alone;
      } finally {
        clearTimeout(timer);
      }
    },
    close: end,
  };
}
