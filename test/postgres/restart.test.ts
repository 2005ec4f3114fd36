/**
 * Database restart: while PostgreSQL is down every storage call fails with UnavailableError
 * (→ 503); once it is back the same storage object works again, with nothing lost.
 *
 * The restart happens on a private, throwaway PostgreSQL 15 cluster (initdb + pg_ctl in a
 * temp dir, its own port), not on the shared 127.0.0.1:5432 server: test files run in
 * parallel, and stopping the shared server would break every other PostgreSQL test running
 * at that moment. Same binaries, same pgvector build, so the adapter sees a real restart.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateUp } from '../../src/adapters/migrations/index.js';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { UnavailableError } from '../../src/core/errors.js';
import type { PatternRecord, Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { pgConfig } from '../support/pg.js';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';
const isRoot = process.getuid?.() === 0;

function canRun(): boolean {
  if (existsSync(join(BIN, 'initdb')) && existsSync(join(BIN, 'pg_ctl'))) return true;
  const message = `PostgreSQL 15 server binaries not found in ${BIN}`;
  if (process.env.CI && process.env.CI !== 'false') throw new Error(`${message}: CI must provide them`);
  console.warn(`\n[skip] restart test: ${message}.\n`);
  return false;
}

/** Runs a server binary, as the postgres user when we are root (initdb refuses root). */
async function pgBin(cmd: string, args: string[]): Promise<void> {
  const [file, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', join(BIN, cmd), ...args]] : [join(BIN, cmd), args];
  await run(file, argv, { timeout: 60_000 });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

class PrivateCluster {
  private constructor(readonly dir: string, readonly port: number) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async create(): Promise<PrivateCluster> {
    const dir = await mkdtemp(join(tmpdir(), 'svc-pg-restart-'));
    if (isRoot) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    const cluster = new PrivateCluster(dir, await freePort());
    await pgBin('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await cluster.start();
    return cluster;
  }

  async start(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB`;
    await pgBin('pg_ctl', ['-D', join(this.dir, 'data'), '-l', join(this.dir, 'server.log'), '-o', opts, '-w', 'start']);
  }

  async stop(): Promise<void> {
    await pgBin('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

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

describe.skipIf(!canRun())('PostgreSQL restart', () => {
  let cluster: PrivateCluster;
  let storage: Storage;

  beforeAll(async () => {
    cluster = await PrivateCluster.create();
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

  it('fails with UnavailableError while the database is down and recovers when it returns', async () => {
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

  it('refuses to start with a clear message when the database cannot be reached', async () => {
    const port = await freePort();
    const config = pgConfig(`postgres://postgres@127.0.0.1:${port}/postgres`, { SERVICE_DB_CONNECT_TIMEOUT_MS: '2000' });
    const failure = createPostgresStorage(config);
    await expect(failure).rejects.toBeInstanceOf(UnavailableError);
    await expect(failure).rejects.toThrow(`cannot connect to PostgreSQL at 127.0.0.1:${port}/postgres`);
  });
});
