import { setTimeout as sleep } from 'node:timers/promises';
import { UnavailableError } from '../../core/errors.js';
import type { Logger } from '../../ports/observability.js';
import { deferUntilConnected } from './deferred.js';

export interface Opened<T> {
  value: T;
  /** Resolves with the real object (at once when it connected at startup). */
  ready: Promise<T>;
  /** True when the server starts without it and connects in the background. */
  deferred: boolean;
}

/**
 * Opens a PostgreSQL-backed object (storage, key store) under SERVICE_DB_WAIT_SECONDS
 * (docs/behavior.md "Faults"): only "cannot connect" (UnavailableError) is waited out; a schema behind the
 * build or a missing extension still fails startup at once.
 * - waitSeconds null: one try; if the database is down, a stand-in answering 503 is returned
 *   and connecting goes on in the background;
 * - waitSeconds n: retries for up to n seconds, then startup fails (0: fail at once).
 */
export async function openWhenReachable<T extends { close(): Promise<void> }>(opts: {
  what: string;
  connect: () => Promise<T>;
  waitSeconds: number | null;
  logger: Logger;
  constants?: Record<string, unknown>;
}): Promise<Opened<T>> {
  const retryable = (err: unknown) => err instanceof UnavailableError;
  if (opts.waitSeconds !== null) {
    const deadline = Date.now() + opts.waitSeconds * 1000;
    let delay = 250;
    for (;;) {
      try {
        const value = await opts.connect();
        return { value, ready: Promise.resolve(value), deferred: false };
      } catch (err) {
        if (!retryable(err) || Date.now() + delay > deadline) throw err;
        opts.logger.warn({ what: opts.what }, `${opts.what} not reachable yet: ${(err as Error).message}; waiting (SERVICE_DB_WAIT_SECONDS)`);
        await sleep(delay);
        delay = Math.min(delay * 2, 5000);
      }
    }
  }
  try {
    const value = await opts.connect();
    return { value, ready: Promise.resolve(value), deferred: false };
  } catch (err) {
    if (!retryable(err)) throw err;
    opts.logger.warn({ err }, `${opts.what} is not reachable: starting anyway, answering 503 until it is (set SERVICE_DB_WAIT_SECONDS to fail instead)`);
  }
  const deferred = deferUntilConnected<T>({
    what: opts.what,
    connect: opts.connect,
    retryable,
    close: (real) => real.close(),
    logger: opts.logger,
    constants: { ...opts.constants, close: () => deferred.close() },
  });
  return { value: deferred.value, ready: deferred.ready, deferred: true };
}
