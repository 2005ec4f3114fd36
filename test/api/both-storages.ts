/**
 * One server per storage for the hardening tests (issue 18): JSON in dev auth mode, and
 * PostgreSQL in DB auth mode with an owner key; both through buildServer + inject.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/app.js';
import type { Env } from '../../src/config/index.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { bearer, perFileDatabase, provisionKey, startDbServer } from './db-auth-helpers.js';
import { startServer } from './helpers.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Harness {
  storage: 'json' | 'postgres';
  app: App;
  /** The server itself (its route registry holds every route's declaration). */
  server: FastifyInstance;
  call(method: Method, url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** Sends a raw (already serialised) JSON body. */
  raw(method: 'POST' | 'PUT', url: string, payload: string): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
  keysEnabled: boolean;
}

export const NO_RATE_LIMITS: Env = {
  SERVICE_RATE_LIMIT_DEFAULT: '1000000', SERVICE_RATE_LIMIT_EXPENSIVE: '1000000', SERVICE_RATE_LIMIT_PER_KEY: '1000000',
};

export async function jsonHarness(env: Env = {}, overrides: Partial<ServiceDeps> = {}): Promise<Harness> {
  const t = await startServer({ ...NO_RATE_LIMITS, ...env }, overrides);
  return {
    storage: 'json',
    app: t.app,
    server: t.server,
    call: (method, url, body, headers) => t.call(method, url, body, headers),
    raw: (method, url, payload) => t.server.inject({ method, url, payload, headers: { 'content-type': 'application/json' } }),
    close: () => t.close(),
    keysEnabled: false,
  };
}

export async function pgHarness(
  database: ReturnType<typeof perFileDatabase>,
  env: Env = {},
  overrides: Partial<ServiceDeps> = {},
): Promise<Harness> {
  const t = await startDbServer((await database.schema()).url, { ...NO_RATE_LIMITS, ...env }, overrides, { runJobs: false });
  const auth = bearer((await provisionKey(t.keyStore, { tenant_id: 'default', project_id: 'default', role: 'owner' })).secret);
  return {
    storage: 'postgres',
    app: t.app,
    server: t.server,
    call: (method, url, body, headers = {}) => t.call(method, url, body, { ...auth, ...headers }),
    raw: (method, url, payload) => t.server.inject({ method, url, payload, headers: { 'content-type': 'application/json', ...auth } }),
    close: () => t.close(),
    keysEnabled: true,
  };
}
