import type { Dispatcher, Pool } from 'undici';
import PoolClass from 'undici/lib/dispatcher/pool.js';
import requestApi from 'undici/lib/api/api-request.js';

/**
 * undici's connection pool and its request() without undici's index, which also loads fetch,
 * WebSocket, caches, mocks and interceptors (110 modules instead of 24): that was a third of
 * the start-up of every CLI call. The index does no more than attach request() to the
 * dispatcher prototype; here it is called on the pool directly. undici has no exports map,
 * so these paths are reachable (typed in undici-internals.d.ts); if a new major moves them,
 * this file is the only place to change (test/unit/client-transport.test.ts and every CLI
 * test go through it).
 */
export interface LightPool {
  request(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  close(): Promise<void>;
}

export function createPool(origin: string, options: Pool.Options): LightPool {
  const pool: Pool = new PoolClass(origin, options);
  return {
    request: (opts) => requestApi.call(pool, opts),
    close: () => pool.close(),
  };
}
