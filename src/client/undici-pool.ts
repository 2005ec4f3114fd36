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
type RequestApi = (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
// Loaded with the first pool, not with this module: the client's public entry is imported by
// every CLI command (its error classes), including those that never send a request.
let undici: { Pool: typeof Pool; request: RequestApi } | undefined;

export interface LightPool {
  request(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  close(): Promise<void>;
}

export function createPool(origin: string, options: Pool.Options): LightPool {
  undici ??= {
    Pool: require('undici/lib/dispatcher/pool.js') as typeof Pool,
    request: require('undici/lib/api/api-request.js') as RequestApi,
  };
  const { Pool: PoolClass, request: requestApi } = undici;
  const pool = new PoolClass(origin, options);
  return {
    request: (opts) => requestApi.call(pool, opts),
    close: () => pool.close(),
  };
}
