import { createRequire } from 'node:module';
import type { Dispatcher, Pool } from 'undici';

/**
 * undici's connection pool and its request() without undici's index, which also loads fetch,
 * WebSocket, caches, mocks and interceptors (110 modules instead of 24): that was a third of
 * the start-up of every CLI call. The index does no more than attach request() to the
 * dispatcher prototype; here it is called on the pool directly. undici has no exports map,
 * so these paths are reachable; if a new major moves them, this file is the only place to
 * change (test/unit/client-transport.test.ts and every CLI test go through it).
 */
const require = createRequire(import.meta.url);
const PoolClass = require('undici/lib/dispatcher/pool.js') as typeof Pool;
const requestApi = require('undici/lib/api/api-request.js') as (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;

export interface LightPool {
  request(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  close(): Promise<void>;
}

export function createPool(origin: string, options: Pool.Options): LightPool {
  const pool = new PoolClass(origin, options);
  return {
    request: (opts) => requestApi.call(pool, opts),
    close: () => pool.close(),
  };
}
