import type { Dispatcher, Pool } from 'undici';
import type PoolModule from 'undici/lib/dispatcher/pool.js';
import type RequestModule from 'undici/lib/api/api-request.js';

/**
 * undici's connection pool and its request() without undici's index, which also loads fetch,
 * WebSocket, caches, mocks and interceptors (110 modules instead of 24): that was a third of
 * the start-up of every CLI call. The index does no more than attach request() to the
 * dispatcher prototype; here it is called on the pool directly. undici has no exports map,
 * so these paths are reachable (typed in undici-internals.d.ts); if a new major moves them,
 * this file is the only place to change (every client and CLI test goes through it).
 *
 * undici is imported with the first request, not with this module: the client's public
 * entry is imported by every CLI command (its error classes), including those that never
 * send one. The imports are static strings, so the CLI bundle still carries undici.
 */
interface Undici {
  Pool: typeof PoolModule;
  request: typeof RequestModule;
}
let loading: Promise<Undici> | undefined;

function loadUndici(): Promise<Undici> {
  loading ??= Promise.all([import('undici/lib/dispatcher/pool.js'), import('undici/lib/api/api-request.js')])
    .then(([pool, request]) => ({ Pool: pool.default, request: request.default }));
  return loading;
}

export interface LightPool {
  request(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  close(): Promise<void>;
}

export function createPool(origin: string, options: Pool.Options): LightPool {
  let opened: Promise<{ pool: Pool; request: Undici['request'] }> | undefined;
  const open = () => (opened ??= loadUndici().then((u) => ({ pool: new u.Pool(origin, options), request: u.request })));
  return {
    request: async (opts) => {
      const { pool, request } = await open();
      return request.call(pool, opts);
    },
    close: async () => {
      if (opened) await (await opened).pool.close();
    },
  };
}
