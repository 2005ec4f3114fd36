/**
 * Issue 25, 1: PostgreSQL ending the service's connections must never end the service.
 * Real `service serve` children (one process, then two workers) in DB auth mode (so every
 * request also goes through the key store) under concurrent learn / recall / async-import
 * load; meanwhile every backend of the test database is terminated several times
 * (pg_terminate_backend), or a TCP proxy resets connections in the middle of statements.
 * Every answer must be 2xx or 503 `storage_unavailable` with Retry-After, 2xx must resume
 * after each fault, every process stays up, the job LISTEN connection comes back and every
 * accepted job completes.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startLoad, summarise, type Answer } from '../support/load.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const hasPg = await requirePostgres('connection faults');
const built = existsSync(join(BIN, '..', '..', 'dist', 'commands', 'main.js'));
if (!built) {
  if (process.env.CI && process.env.CI !== 'false') throw new Error('dist/ is missing: `npm test` builds it first');
  console.warn('\n[skip] connection faults: run `npm run build` first (the test spawns bin/service.js).\n');
}

const TOKEN = 'fault-test-bootstrap-token-0123456789abcdef';
const ROUNDS = 3;

/** Polls `probe` until it returns a value, for at most `timeoutMs`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Terminates every session of the service on `database`; returns how many there were. */
async function terminateBackends(database: string): Promise<number> {
  const res = await adminQuery(
    `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
     WHERE datname = $1 AND application_name LIKE 'agent-memory-service%' AND pid <> pg_backend_pid()`,
    [database],
  );
  return (res.rows[0] as { n: number }).n;
}

/** Resolves once a session of the job queue is LISTENing again on `database`. */
function listening(database: string): Promise<true> {
  return until('the job LISTEN connection to come back', async () => {
    const res = await adminQuery(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'agent-memory-service-jobs' AND query ILIKE 'LISTEN%'`,
      [database],
    );
    return (res.rows[0] as { n: number }).n > 0 ? true : undefined;
  });
}

function workerPids(server: ServerHandle): number[] {
  return [...server.stderr().matchAll(/^worker (\d+) listening$/gm)].map((m) => Number(m[1]));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function expectOnly2xxOr503(answers: Answer[]): void {
  const bad = answers.filter((a) => !((a.status >= 200 && a.status < 300) || a.status === 503));
  expect(bad, JSON.stringify(summarise(answers))).toEqual([]);
  const unavailable = answers.filter((a) => a.status === 503);
  for (const a of unavailable) {
    expect(a.code).toBe('storage_unavailable');
    expect(a.retryAfter).toMatch(/^\d+$/);
  }
}

describe.skipIf(!hasPg || !built)('PostgreSQL connections ended under load (issue 25, 1)', () => {
  let db: TestDatabase;
  let dir: { path: string; remove(): Promise<void> };
  let server: ServerHandle | undefined;
  let proxy: TcpProxy | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('conn_faults');
    dir = await tempDir('svc-conn-faults-');
  }, 120_000);

  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
    await proxy?.close();
    proxy = undefined;
  });

  afterAll(async () => {
    await dir?.remove();
    await db?.drop();
  });

  async function serve(url: string, workers: number): Promise<{ server: ServerHandle; headers: Record<string, string> }> {
    server = await startServer({
      dataPath: dir.path,
      args: ['--workers', String(workers)],
      env: {
        SERVICE_STORAGE: 'postgres',
        SERVICE_DATABASE_URL: url,
        SERVICE_AUTH_MODE: 'db',
        SERVICE_BOOTSTRAP_TOKEN: TOKEN,
        SERVICE_RATE_LIMIT_DEFAULT: '1000000',
        SERVICE_RATE_LIMIT_EXPENSIVE: '1000000',
        SERVICE_RATE_LIMIT_PER_KEY: '1000000',
        // A claim whose connection broke after it committed leaves its job to stale recovery.
        SERVICE_JOB_STALE_SECONDS: '5',
        SERVICE_JOB_POLL_INTERVAL: '1',
      },
    });
    const boot = await fetch(`${server.url}/v1/keys/bootstrap`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: TOKEN }),
    });
    expect(boot.status).toBe(201);
    const { secret } = (await boot.json()) as { secret: string };
    return { server, headers: { authorization: `Bearer ${secret}` } };
  }

  /** Every accepted job ends completed (jobs interrupted by the faults are retried, not failed). */
  async function expectJobsCompleted(baseUrl: string, headers: Record<string, string>, jobs: string[]): Promise<void> {
    expect(jobs.length).toBeGreaterThan(0);
    for (const id of jobs) {
      const job = await until(`job ${id} to finish`, async () => {
        const res = await fetch(`${baseUrl}/v1/jobs/${id}`, { headers });
        if (res.status !== 200) return undefined;
        const body = (await res.json()) as { status: string; error: string | null };
        return body.status === 'completed' || body.status === 'failed' ? body : undefined;
      });
      expect(job, `job ${id}`).toMatchObject({ status: 'completed' });
    }
  }

  for (const workers of [1, 2]) {
    it(`--workers ${workers}: terminating every backend ${ROUNDS} times answers only 2xx or 503, and recovers`, async () => {
      const schema = await createMigratedSchema(db, `term${workers}`);
      const { server: s, headers } = await serve(schema.url, workers);
      // The primary and each worker (one process when --workers 1).
      const pids = workers > 1 ? [s.child.pid!, ...workerPids(s)] : [s.child.pid!];
      expect(pids).toHaveLength(workers > 1 ? workers + 1 : 1);
      const load = startLoad(s.url, headers, { stopOnExit: s.exited });
      try {
        await load.successesAfterNow(3);
        for (let round = 1; round <= ROUNDS; round++) {
          expect(await terminateBackends(db.name), `round ${round}: sessions terminated`).toBeGreaterThan(0);
          await load.successesAfterNow(3);
        }
        await listening(db.name);
      } finally {
        await load.stop();
      }
      expectOnly2xxOr503(load.answers);
      for (const pid of pids) expect(isAlive(pid), `process ${pid}`).toBe(true);
      expect(s.stderr()).not.toMatch(/exited|unhandled|uncaught/i);
      await expectJobsCompleted(s.url, headers, load.jobs);
    }, 300_000);
  }

  it('a proxy resetting connections mid-statement: only 2xx or 503, and recovers', async () => {
    const schema = await createMigratedSchema(db, 'proxy');
    const target = new URL(db.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const { server: s, headers } = await serve(proxy.url(schema.url), 1);
    const load = startLoad(s.url, headers, { stopOnExit: s.exited });
    try {
      await load.successesAfterNow(3);
      for (let round = 1; round <= ROUNDS; round++) {
        const before = proxy.cut;
        proxy.cutNextStatements(4);
        await until(`round ${round}: statements cut`, async () => (proxy!.cut >= before + 4 ? true : undefined));
        await load.successesAfterNow(3);
      }
      proxy.resetAll();
      await load.successesAfterNow(3);
    } finally {
      await load.stop();
    }
    expectOnly2xxOr503(load.answers);
    expect(isAlive(s.child.pid!)).toBe(true);
    expect(s.stderr()).not.toMatch(/exited|unhandled|uncaught/i);
    await expectJobsCompleted(s.url, headers, load.jobs);
  }, 300_000);
});
