import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildServer } from '../../server/app.js';
import { createApp, type App } from '../../src/app.js';
import { loadConfig, type Config, type Env } from '../../src/config/index.js';
import type { Clock } from '../../src/ports/clock.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import type { Storage } from '../../src/ports/storage.js';
import { createJsonStorage } from '../../src/adapters/storage/json/index.js';

/** The offline model (same transformers.js code path as the default MiniLM). */
import { TEST_MODEL_PATH } from '../support/env.js';
export const MODEL_PATH = TEST_MODEL_PATH;

export interface TestServer {
  server: FastifyInstance;
  app: App;
  dataPath: string;
  /** JSON request helper: body is serialised with the right content type. */
  call(method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** The API tests' defaults: JSON storage at `dataPath`, offline model, dev auth, no LLM, silent logs. */
export function testConfig(dataPath: string, env: Env = {}): Config {
  return loadConfig({
    SERVICE_DATA_PATH: dataPath,
    SERVICE_LOCAL_EMBEDDINGS: '1',
    SERVICE_EMBEDDING_MODEL_PATH: MODEL_PATH,
    SERVICE_LLM_PROVIDER: 'none',
    SERVICE_LOG_LEVEL: 'silent',
    SERVICE_AUTH_MODE: 'dev',
    SERVICE_ALLOW_NO_AUTH: 'true',
    ...env,
  });
}

/**
 * A server over real JSON storage in a fresh temp dir and the real local embedder on the
 * offline model. Defaults: dev auth (no keys), no LLM, silent logs; `env` overrides any of it.
 */
export async function startServer(env: Env = {}, overrides: Partial<ServiceDeps> = {}): Promise<TestServer> {
  const dataPath = await mkdtemp(join(tmpdir(), 'svc-api-'));
  const config = testConfig(dataPath, env);
  const app = await createApp(config, overrides);
  const server = await buildServer(app, { checkResponses: true });
  return {
    server,
    app,
    dataPath,
    call: (method, url, body, headers = {}) =>
      server.inject({
        method,
        url,
        headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
        payload: body === undefined ? undefined : JSON.stringify(body),
      }),
    async close() {
      await server.close();
      await app.close();
      await rm(dataPath, { recursive: true, force: true });
    },
  };
}

/**
 * startServer for one test file: call it at the file's top level; every server the returned
 * function starts is closed after each test (so a failing test leaks no server or data dir).
 */
export function serversClosedAfterEach(): (...args: Parameters<typeof startServer>) => Promise<TestServer> {
  const servers: TestServer[] = [];
  afterEach(async () => {
    while (servers.length) await servers.pop()?.close();
  });
  return async (...args) => {
    const t = await startServer(...args);
    servers.push(t);
    return t;
  };
}

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private current: Date = new Date('2025-01-01T00:00:00.000Z')) {}
  now(): Date {
    return new Date(this.current);
  }
  set(iso: string): void {
    this.current = new Date(iso);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export function learnBody(task: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { task, code: `// solution for: ${task}\nexport function run() { return 42; }`, eval_score: 8, ...extra };
}

/**
 * Real JSON storage in its own temp dir, with some members replaced (failure injection).
 * close() also removes the dir.
 */
export async function patchedJsonStorage(patch: (real: Storage) => Partial<Storage>): Promise<Storage> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-api-storage-'));
  const real = await createJsonStorage({ dataPath: dir });
  return {
    ...real,
    ...patch(real),
    async close() {
      await real.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
