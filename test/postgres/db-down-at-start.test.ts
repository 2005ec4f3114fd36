/**
 * Issue 18 (10): PostgreSQL down when the server starts. By default the server starts anyway,
 * answers 503 `{detail}` (deep health `error`) and recovers by itself once the database
 * appears; SERVICE_DB_WAIT_SECONDS makes startup wait a bounded time and then fail instead.
 * The database "appears" when a TCP relay to the real one starts listening on the port the
 * server was given.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../server/app.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { MODEL_PATH } from '../api/helpers.js';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';

const hasPg = await requirePostgres('PostgreSQL down at startup');

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Relays connections on `port` to the real PostgreSQL. */
async function startRelay(port: number, target: URL): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const relay: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
  return {
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      relay.close(() => resolve());
    }),
  };
}

const env = (url: string, extra: Record<string, string> = {}) => ({
  SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: url, SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true',
  SERVICE_LOCAL_EMBEDDINGS: '1', SERVICE_EMBEDDING_MODEL_PATH: MODEL_PATH, SERVICE_LLM_PROVIDER: 'none', SERVICE_LOG_LEVEL: 'silent',
  SERVICE_DB_CONNECT_TIMEOUT_MS: '1000', ...extra,
});

describe.skipIf(!hasPg)('PostgreSQL down at startup', () => {
  let db: TestDatabase;
  let schema: TestSchema;
  let port: number;
  let downUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase('dbdown');
    schema = await createMigratedSchema(db, 'dbdown');
    port = await freePort();
    const u = new URL(schema.url);
    u.port = String(port);
    downUrl = u.toString();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('starts anyway, answers 503 with a detail, and serves once the database appears', async () => {
    const app = await createApp(loadConfig(env(downUrl)), {}, { runJobs: false });
    const server = await buildServer(app);
    let relay: { close(): Promise<void> } | null = null;
    try {
      const health = await server.inject({ method: 'GET', url: '/v1/health' });
      expect(health.statusCode).toBe(503);
      expect(health.json().detail).toMatch(/PostgreSQL storage is not reachable yet/);
      const deep = await server.inject({ method: 'GET', url: '/v1/health/deep' });
      expect(deep.statusCode).toBe(503);
      expect(deep.json().status).toBe('error');
      // The probes: alive, not ready (and nothing more said).
      expect((await server.inject({ method: 'GET', url: '/livez' })).json()).toEqual({ status: 'up' });
      const notReady = await server.inject({ method: 'GET', url: '/readyz' });
      expect([notReady.statusCode, notReady.json()]).toEqual([503, { status: 'not_ready' }]);
      const learn = await server.inject({ method: 'POST', url: '/v1/learn', payload: { task: 'count words', code: 'wc()', eval_score: 6 } });
      expect(learn.statusCode).toBe(503);
      expect(learn.json().detail).toEqual(expect.any(String));

      relay = await startRelay(port, new URL(schema.url));
      // Wait for the event (the background connect succeeding), bounded generously.
      let status = 0;
      for (let i = 0; i < 300 && status !== 200; i++) {
        status = (await server.inject({ method: 'GET', url: '/v1/health' })).statusCode;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(200);
      const ready = await server.inject({ method: 'GET', url: '/readyz' });
      expect([ready.statusCode, ready.json()]).toEqual([200, { status: 'ready' }]);
      const stored = await server.inject({ method: 'POST', url: '/v1/learn', payload: { task: 'count words', code: 'wc()', eval_score: 6 } });
      expect(stored.statusCode, stored.body).toBe(200);
      expect((await server.inject({ method: 'GET', url: '/v1/health/deep' })).json().status).not.toBe('error');
    } finally {
      await server.close();
      await app.close();
      await relay?.close();
    }
  }, 60_000);

  it('in DB auth mode too: an authenticated request answers 503 while the key store is unreachable', async () => {
    const app = await createApp(loadConfig(env(downUrl, { SERVICE_AUTH_MODE: 'db', SERVICE_ALLOW_NO_AUTH: '' })), {}, { runJobs: false });
    const server = await buildServer(app);
    try {
      const res = await server.inject({ method: 'GET', url: '/v1/metrics', headers: { authorization: `Bearer svc_${'a'.repeat(43)}` } });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().detail).toMatch(/not reachable yet/);
      // The probes take no key: alive, not ready.
      expect((await server.inject({ method: 'GET', url: '/livez' })).statusCode).toBe(200);
      expect((await server.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    } finally {
      await server.close();
      await app.close();
    }
  });

  it('SERVICE_DB_WAIT_SECONDS bounds the wait: startup fails naming the database', async () => {
    await expect(createApp(loadConfig(env(downUrl, { SERVICE_DB_WAIT_SECONDS: '0' })), {}, { runJobs: false }))
      .rejects.toThrow(/cannot connect to PostgreSQL/);
  });
});
