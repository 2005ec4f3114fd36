/**
 * DB auth mode test harness: a real server (buildServer + inject) over PostgreSQL storage in a
 * per-file database, with the API keys of the real key store.
 */
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildServer } from '../../server/app.js';
import { createApp, type App, type CreateAppOptions } from '../../src/app.js';
import { loadConfig, type Env } from '../../src/config/index.js';
import type { Role } from '../../src/core/types.js';
import type { KeyStore } from '../../src/ports/keys.js';
import { generateApiKey } from '../../src/services/api-key-secrets.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { createMigratedSchema, createTestDatabase, type TestDatabase, type TestSchema } from '../support/pg.js';
import { MODEL_PATH } from './helpers.js';

export const BOOTSTRAP_TOKEN = 'bootstrap-token-for-tests-0123456789abcdef';

export const bearer = (secret: string): Record<string, string> => ({ authorization: `Bearer ${secret}` });

export interface DbServer {
  server: FastifyInstance;
  app: App;
  keyStore: KeyStore;
  call(method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** The environment of a DB-mode server on `url` (auto auth mode resolves to db). */
export function dbEnv(url: string, env: Env = {}): Env {
  return {
    SERVICE_STORAGE: 'postgres',
    SERVICE_DATABASE_URL: url,
    SERVICE_LOCAL_EMBEDDINGS: '1',
    SERVICE_EMBEDDING_MODEL_PATH: MODEL_PATH,
    SERVICE_LLM_PROVIDER: 'none',
    SERVICE_LOG_LEVEL: 'silent',
    SERVICE_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
    // The matrix and isolation tests send hundreds of requests from one IP within a minute.
    SERVICE_RATE_LIMIT_DEFAULT: '100000',
    SERVICE_RATE_LIMIT_EXPENSIVE: '100000',
    SERVICE_RATE_LIMIT_PER_KEY: '100000',
    ...env,
  };
}

export async function startDbServer(
  url: string,
  env: Env = {},
  overrides: Partial<ServiceDeps> = {},
  options: CreateAppOptions = {},
): Promise<DbServer> {
  const app = await createApp(loadConfig(dbEnv(url, env)), overrides, options);
  const server = await buildServer(app, { checkResponses: true });
  if (!app.deps.keyStore) throw new Error('expected DB auth mode');
  return {
    server,
    app,
    keyStore: app.deps.keyStore,
    call: (method, path, body, headers = {}) =>
      server.inject({
        method,
        url: path,
        headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
        payload: body === undefined ? undefined : JSON.stringify(body),
      }),
    async close() {
      await server.close();
      await app.close();
    },
  };
}

/** One database per test file, and fresh migrated schemas carved out of it. */
export function perFileDatabase(prefix: string): { schema(): Promise<TestSchema>; drop(): Promise<void> } {
  let db: Promise<TestDatabase> | null = null;
  return {
    async schema() {
      db ??= createTestDatabase(prefix);
      return createMigratedSchema(await db, prefix);
    },
    async drop() {
      if (db) await (await db).drop();
    },
  };
}

/** A key stored straight through the repository (a second tenant has no other way in). */
export async function provisionKey(
  keyStore: KeyStore,
  opts: { tenant_id: string; project_id: string; role: Role; max_patterns?: number | null; expires_at?: string | null; name?: string },
): Promise<{ key_id: string; secret: string }> {
  const generated = generateApiKey();
  await keyStore.tenants.provision({
    tenant_id: opts.tenant_id,
    project_id: opts.project_id,
    key: {
      key_id: generated.key_id,
      name: opts.name ?? `${opts.role} of ${opts.tenant_id}/${opts.project_id}`,
      role: opts.role,
      hash: generated.hash,
      prefix: generated.prefix,
      max_patterns: opts.max_patterns ?? null,
      expires_at: opts.expires_at ?? null,
      created_at: new Date().toISOString(),
    },
  });
  return { key_id: generated.key_id, secret: generated.secret };
}
