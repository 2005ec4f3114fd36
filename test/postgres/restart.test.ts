/**
 * Database restart: while PostgreSQL is down every storage call fails with UnavailableError
 * and the API answers 503 {detail}; once it is back the same storage object and the same
 * server process work again, with nothing acknowledged lost, even after a crash-like stop.
 * The cluster is a throwaway one (test/support/pg-cluster.ts), restarted with pg_ctlcluster.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrateUp, revisionLabel } from '../../src/adapters/migrations/index.js';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { UnavailableError } from '../../src/core/errors.js';
import type { PatternRecord, Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { BIN as SERVICE_BIN } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { pgConfig } from '../support/pg.js';
import { canMakeCluster, createCluster, freePort, type TestCluster } from '../support/pg-cluster.js';
import { startServer, type ServerHandle } from '../support/server.js';

const built = existsSync(join(SERVICE_BIN, '..', '..', 'dist', 'commands', 'main.js'));

const scope: Scope = { tenant_id: 'default', project_id: 'default' };

function record(id: string): PatternRecord {
  const at = '2025-03-01T12:00:00.000Z';
  return {
    id, task: `task ${id}`, code: `print(${id.length})`, output: 'ok', eval_score: 8, success_score: 8, reuse_count: 0,
    run_id: null, classification: 'internal', source: 'api', author: null, expires_at: null, redacted: false,
    created_at: at, updated_at: at, last_aged_at: null,
  };
}

const vec = (seed: number) => Float32Array.from({ length: 384 }, (_, i) => Math.sin(seed + i / 10));

describe.skipIf(!canMakeCluster('restart test'))('PostgreSQL restart', () => {
  let cluster: TestCluster;
  let storage: Storage;

  beforeAll(async () => {
    cluster = await createCluster();
    const pool = new pg.Pool({ connectionString: cluster.url, max: 1 });
    try {
      await migrateUp(pool);
    } finally {
      await pool.end();
    }
    storage = await createPostgresStorage(pgConfig(cluster.url, { SERVICE_DB_CONNECT_TIMEOUT_MS: '2000' }));
  });

  afterAll(async () => {
    await storage?.close().catch(() => undefined);
    await cluster?.destroy();
  });

  it('fails with UnavailableError while the database is down and recovers when it returns (pg_ctlcluster stop/start)', async () => {
    await storage.patterns.insert(scope, record('aaa1'), vec(1));
    await storage.evals.add(scope, 'aaa1', 8, '2025-03-01T12:00:00.000Z');
    await storage.ping();

    await cluster.stop();
    try {
      await expect(storage.ping()).rejects.toBeInstanceOf(UnavailableError);
      await expect(storage.patterns.get(scope, 'aaa1')).rejects.toBeInstanceOf(UnavailableError);
      await expect(storage.patterns.search(scope, vec(1), 3)).rejects.toBeInstanceOf(UnavailableError);
      await expect(storage.patterns.insert(scope, record('aaa2'), vec(2))).rejects.toThrow(/storage unavailable/);
    } finally {
      await cluster.start();
    }

    // The pool dropped its dead connections; the next call opens a fresh one.
    await storage.ping();
    expect(await storage.patterns.get(scope, 'aaa1')).toEqual(record('aaa1'));
    expect((await storage.evals.recent(scope, ['aaa1'], 5)).get('aaa1')).toEqual([8]);
    await storage.patterns.insert(scope, record('aaa2'), vec(2));
    expect(await storage.patterns.count(scope)).toBe(2);
    expect((await storage.patterns.search(scope, vec(2), 1))[0].pattern.id).toBe('aaa2');
  });

  it.skipIf(!built)('a server learning in a loop answers 503 while PostgreSQL is down (crash stop), then carries on; every acknowledged learn is kept', async () => {
    const data = await tempDir('svc-pg-restart-');
    let server: ServerHandle | null = null;
    try {
      server = await startServer({
        dataPath: data.path,
        env: {
          SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: cluster.url, SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true',
          SERVICE_DB_CONNECT_TIMEOUT_MS: '1000', SERVICE_RATE_LIMIT_DEFAULT: '100000', SERVICE_RATE_LIMIT_PER_KEY: '100000',
        },
      });
      const url = server.url;
      const project = { 'content-type': 'application/json', 'x-project-id': 'restart' };
      const acknowledged: string[] = [];
      const refused: string[] = [];
      const attempted: string[] = [];
      let i = 0;
      const learnOnce = async (): Promise<number> => {
        const task = `restart loop task ${i++} ${i % 2 ? 'alpha' : 'beta'}`;
        attempted.push(task);
        const res = await fetch(`${url}/v1/learn`, { method: 'POST', headers: project, body: JSON.stringify({ task, code: `step(${i})`, eval_score: 8 }) });
        const body = (await res.json()) as { detail?: string; stored?: boolean };
        if (res.status === 200) acknowledged.push(task);
        else if (res.status === 503) refused.push(body.detail ?? '');
        else throw new Error(`unexpected ${res.status}: ${JSON.stringify(body)}`);
        return res.status;
      };

      const deepHealth = async () => {
        const res = await fetch(`${url}/v1/health/deep`, { headers: project });
        return { status: res.status, body: (await res.json()) as { status: string; checks: { storage: Record<string, unknown> } } };
      };
      const latest = revisionLabel((await loadMigrations()).at(-1)!);

      for (let n = 0; n < 5; n++) expect(await learnOnce()).toBe(200);
      // Deep health asks the database itself: its latency and the schema revision.
      const up = await deepHealth();
      expect(up.status).toBe(200);
      expect(up.body.checks.storage).toEqual({ status: 'ok', latency_ms: expect.any(Number), schema_revision: latest });

      // Crash-like stop: no shutdown checkpoint, so restart replays the WAL.
      await cluster.stop('immediate');
      try {
        for (let n = 0; n < 3; n++) expect(await learnOnce()).toBe(503);
        const down = await deepHealth();
        expect(down.status).toBe(503);
        expect(down.body.status).toBe('error');
        expect(down.body.checks.storage.status).toBe('error');
      } finally {
        await cluster.start();
      }
      // The same process recovers without a restart of its own.
      let after = 0;
      for (let n = 0; n < 50 && after < 5; n++) if ((await learnOnce()) === 200) after++;
      expect(after).toBe(5);

      expect(refused.length).toBeGreaterThanOrEqual(3);
      for (const detail of refused) expect(detail).toMatch(/storage unavailable|PostgreSQL/);
      const exported = (await (await fetch(`${url}/v1/export`, { headers: project })).json()) as { records: { task: string }[] };
      const stored = new Set(exported.records.map((r) => r.task));
      for (const task of acknowledged) expect(stored.has(task)).toBe(true);
      // A learn refused mid-flight may or may not have committed; nothing else appears.
      for (const task of stored) expect(attempted).toContain(task);
      const health = (await (await fetch(`${url}/v1/health`, { headers: project })).json()) as { pattern_count: number };
      expect(health.pattern_count).toBe(stored.size);
    } finally {
      await server?.stop();
      await data.remove();
    }
  });

  it('refuses to start with a clear message when the database cannot be reached', async () => {
    const port = await freePort();
    const config = pgConfig(`postgres://postgres@127.0.0.1:${port}/postgres`, { SERVICE_DB_CONNECT_TIMEOUT_MS: '2000' });
    const failure = createPostgresStorage(config);
    await expect(failure).rejects.toBeInstanceOf(UnavailableError);
    await expect(failure).rejects.toThrow(`cannot connect to PostgreSQL at 127.0.0.1:${port}/postgres`);
  });
});
