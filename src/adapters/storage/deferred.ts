import { StorageUnavailableError } from '../../core/errors.js';
import type { Logger } from '../../ports/observability.js';

/**
 * PostgreSQL down at startup (docs/behavior.md "Faults"). Under an orchestrator that starts the service
 * before its database, the server starts anyway: until the database answers, every storage
 * (or key store) call fails with UnavailableError (HTTP 503 `{detail}`, deep health `error`),
 * and a background loop keeps connecting; once it succeeds, calls go straight through.
 *
 * The stand-in is a Proxy over the interface's shape: property reads return further
 * stand-ins, calls resolve the same path on the real object once there is one. A call made
 * before that returns a rejected promise that is also an async iterable which throws, so
 * `await repo.x()` and `for await (… of repo.iterate())` both see the UnavailableError.
 */
export interface Deferred<T> {
  /** The stand-in to hand out in place of the real object. */
  readonly value: T;
  /** Resolves with the real object once connected (rejects when connecting gave up). */
  readonly ready: Promise<T>;
  /** Stops retrying and closes the real object if it arrived. */
  close(): Promise<void>;
}

export interface DeferredOptions<T> {
  what: string;
  connect: () => Promise<T>;
  /** Whether a failure is worth retrying (the database not answering), rather than final. */
  retryable: (err: unknown) => boolean;
  close: (real: T) => Promise<void>;
  /** Fixed fields answered without the real object (e.g. a storage's `kind`). */
  constants?: Record<string, unknown>;
  logger: Logger;
  retryMs?: { first: number; max: number };
}

export function deferUntilConnected<T extends object>(opts: DeferredOptions<T>): Deferred<T> {
  let real: T | null = null;
  let lastError: unknown = null;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const retry = opts.retryMs ?? { first: 500, max: 5000 };

  const unavailable = () =>
    new StorageUnavailableError(`${opts.what} is not reachable yet (${describe(lastError)}); retrying in the background`);

  const ready = new Promise<T>((resolve, reject) => {
    let delay = retry.first;
    const attempt = async () => {
      if (stopped) return;
      try {
        const connected = await opts.connect();
        if (stopped) {
          await opts.close(connected).catch(() => undefined);
          return;
        }
        real = connected;
        opts.logger.info({ what: opts.what }, `${opts.what} is reachable: serving`);
        resolve(connected);
      } catch (err) {
        // Closed meanwhile: a shared pool ended under this attempt is no failure to report.
        if (stopped) return;
        lastError = err;
        if (!opts.retryable(err)) {
          opts.logger.error({ err }, `${opts.what} cannot be used; giving up`);
          reject(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        opts.logger.warn({ what: opts.what, retry_ms: delay }, `${opts.what} not reachable: ${describe(err)}`);
        timer = setTimeout(() => void attempt(), delay);
        timer.unref();
        delay = Math.min(delay * 2, retry.max);
      }
    };
    void attempt();
  });
  ready.catch(() => undefined);

  const failed = (): unknown => {
    const err = unavailable();
    const rejected = Promise.reject(err);
    rejected.catch(() => undefined);
    return Object.assign(rejected, {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(err) }),
    });
  };

  const standIn = (path: PropertyKey[]): unknown =>
    new Proxy(function deferredMember() {}, {
      get(_target, prop) {
        if (prop === 'then') return undefined; // not a promise: `await standIn` must not hang
        if (path.length === 0 && opts.constants && typeof prop === 'string' && prop in opts.constants) return opts.constants[prop];
        if (real) {
          const { value, owner } = resolvePath(real, [...path, prop]);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(owner) : value;
        }
        return standIn([...path, prop]);
      },
      apply(_target, _this, args: unknown[]) {
        if (!real) return failed();
        const { value, owner } = resolvePath(real, path);
        if (typeof value !== 'function') throw new TypeError(`${opts.what}: ${path.map(String).join('.')} is not a function`);
        return (value as (...a: unknown[]) => unknown).apply(owner, args);
      },
    });

  return {
    value: standIn([]) as T,
    ready,
    async close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (real) await opts.close(real);
    },
  };
}

function resolvePath(root: object, path: PropertyKey[]): { value: unknown; owner: unknown } {
  let owner: unknown = undefined;
  let value: unknown = root;
  for (const key of path) {
    owner = value;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return { value, owner };
}

function describe(err: unknown): string {
  if (err === null) return 'connecting';
  return err instanceof Error ? err.message : String(err);
}
