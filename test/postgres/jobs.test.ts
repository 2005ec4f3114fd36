/**
 * The job queue on PostgreSQL: the JobRepository contract, the jobs API over a real database,
 * stale recovery by the worker, and two workers sharing one queue without running a job twice.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresJobRepository } from '../../src/adapters/storage/postgres/jobs.js';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import type { Config } from '../../src/config/index.js';
import { createApp, type App } from '../../src/app.js';
import type { Env } from '../../src/config/index.js';
import { JobRecord } from '../../src/contracts/jobs.js';
import { silentLogger, type Logger } from '../../src/ports/observability.js';
import { buildServer } from '../../server/app.js';
import { startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.js';
import { llmEnv, makeLlm } from '../llm/helpers.js';
import { runJobRepositoryContract } from '../contract/jobs.contract.js';
import { MODEL_PATH, type TestServer } from '../api/helpers.js';
import { accepted, isComposer, pollJob, scriptEverything } from '../api/jobs-support.js';
import { adminQuery, createTestDatabase, pgConfig, requirePostgres, reusableSchema, type TestDatabase } from '../support/pg.js';

const hasPg = await requirePostgres('job queue on PostgreSQL');

let database: Promise<TestDatabase> | null = null;
const db = () => (database ??= createTestDatabase('jobs'));
const schemas = reusableSchema(db, 'jobs');

afterAll(async () => {
  if (database) await (await database).drop();
});

/** The queue as a server gets it: part of the PostgreSQL storage (closing it closes the storage). */
async function openQueue(config: Config): Promise<PostgresJobRepository> {
  const storage = await createPostgresStorage(config);
  const jobs = storage.jobs as PostgresJobRepository;
  return { ...jobs, close: () => storage.close() };
}

describe.skipIf(!hasPg)('PostgreSQL job queue', () => {
  runJobRepositoryContract('postgres', async () => {
    const schema = await schemas.next();
    const config = pgConfig(schema.url);
    let repo: PostgresJobRepository = await openQueue(config);
    return {
      jobs: repo,
      async reopen() {
        await repo.close();
        repo = await openQueue(config);
        return repo;
      },
      cleanup: () => repo.close(),
    };
  });

  it('listens again after its LISTEN connection is killed, and wakes its subscribers', async () => {
    const schema = await schemas.next();
    const repo = await openQueue(pgConfig(schema.url));
    let wakes = 0;
    const off = repo.subscribe(() => wakes++);
    let n = 0;
    const enqueueUntilWoken = async () => {
      const before = wakes;
      while (wakes === before) {
        await repo.enqueue({ tenant_id: 't', project_id: 'p' }, { job_id: `listen${String(n++).padStart(6, '0')}`, operation: 'aging', payload: null, created_at: new Date().toISOString() });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    try {
      await enqueueUntilWoken();
      const killed = await adminQuery(
        "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'agent-memory-service-jobs' AND datname = $1",
        [(await db()).name],
      );
      expect(killed.rows).toEqual([{ ok: true }]);
      await enqueueUntilWoken();
    } finally {
      off();
      await repo.close();
    }
  });

  describe('worker and API', () => {
    let fake: FakeLlm;
    const open: { app: App; close(): Promise<void> }[] = [];
    beforeAll(async () => { fake = await startFakeLlm(); });
    afterAll(async () => { await fake.close(); });
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
      fake.reset();
    });

    /** A server on the schema's database, the fake LLM and the offline embedder. */
    async function pgServer(url: string, extra: Env = {}, logger: Logger = silentLogger): Promise<TestServer> {
      const env = llmEnv(fake, 'provider_a', { SERVICE_EMBEDDING_MODEL_PATH: MODEL_PATH, SERVICE_JOB_POLL_INTERVAL: '0.1', SERVICE_LOG_LEVEL: 'silent', SERVICE_RATE_LIMIT_EXPENSIVE: '1000', ...extra });
      const config = pgConfig(url, env as Record<string, string>);
      const app = await createApp(config, { llm: makeLlm(config), logger });
      const server = await buildServer(app);
      const handle: TestServer = {
        server, app, dataPath: '',
        call: (method, path, body, headers = {}) => server.inject({
          method, url: path, headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
          payload: body === undefined ? undefined : JSON.stringify(body),
        }),
        async close() {
          await server.close();
          await app.close();
        },
      };
      open.push(handle);
      return handle;
    }

    it('runs an async import and an aging job with the synchronous results', async () => {
      const schema = await schemas.next();
      const t = await pgServer(schema.url);
      const records = [1, 2].map((i) => ({ task: `Export table ${i} to parquet`, code: `to_parquet(${i})`, eval_score: 7 }));
      const sync = (await t.call('POST', '/v1/import', { records }, { 'x-project-id': 'p1' })).json();
      const id = accepted(await t.call('POST', '/v1/import', { records }, { 'x-project-id': 'p2', prefer: 'respond-async' }));
      const job = JobRecord.parse(await pollJob(t, id, { 'x-project-id': 'p2' }));
      expect(job).toMatchObject({ status: 'completed', operation: 'import', attempts: 1, result: sync });
      expect((await t.call('GET', '/v1/metrics', undefined, { 'x-project-id': 'p2' })).json().pattern_count).toBe(2);
      expect((await t.call('GET', `/v1/jobs/${id}`, undefined, { 'x-project-id': 'p1' })).statusCode).toBe(404);
    });

    it('requeues a job whose worker died and runs it once more (attempts 2)', async () => {
      const schema = await schemas.next();
      const repo = await openQueue(pgConfig(schema.url));
      try {
        const scope = { tenant_id: 'default', project_id: 'default' };
        await repo.enqueue(scope, { job_id: 'deadbeef0000000001', operation: 'aging', payload: { input: null, ctx: { actor: 'dev', request_id: null, ip: null } }, created_at: new Date().toISOString() });
        // A worker that claimed it and then vanished: its last heartbeat is long past.
        await repo.claim('vanished-worker', 1, new Date(Date.now() - 3_600_000).toISOString());
      } finally {
        await repo.close();
      }
      const t = await pgServer(schema.url, { SERVICE_JOB_STALE_SECONDS: '1' });
      const job = await pollJob(t, 'deadbeef0000000001', {}, (j) => j.status === 'completed' || j.status === 'failed');
      expect(job).toMatchObject({ status: 'completed', attempts: 2, result: { aged: 0, pruned: 0, remaining: 0 } });
    });

    it('shares one queue between two workers: every job runs exactly once, on one of them', async () => {
      const schema = await schemas.next();
      const ran = new Map<string, string[]>();
      const recorder = (name: string): Logger => ({
        ...silentLogger,
        info(obj: object, msg?: string) {
          const o = obj as { job_id?: string; status?: string };
          if (msg === 'job completed' && o.job_id) ran.set(name, [...(ran.get(name) ?? []), o.job_id]);
        },
      });
      const first = await pgServer(schema.url, { SERVICE_JOB_MAX_CONCURRENT: '2' }, recorder('first'));
      await pgServer(schema.url, { SERVICE_JOB_MAX_CONCURRENT: '2' }, recorder('second'));
      scriptEverything(fake, { delayMs: 150 });

      const tasks = Array.from({ length: 12 }, (_, i) => `Pipeline number ${i}: read in${i}.csv and write out${i}.md`);
      const ids: string[] = [];
      for (const task of tasks) ids.push(accepted(await first.call('POST', '/v1/compose', { task }, { prefer: 'respond-async' })));
      for (const id of ids) expect((await pollJob(first, id)).status).toBe('completed');

      const composed = fake.chatRequests().filter((r) => isComposer(r.call!)).map((r) => r.call!.prompt);
      for (const task of tasks) expect(composed.filter((p) => p.includes(`<task>\n${task}\n</task>`))).toHaveLength(1);
      // "job completed" is logged just after the status is stored: wait for the last log lines
      // (an event, bounded) rather than assume they came before the poll saw the status.
      const logged = () => [...(ran.get('first') ?? []), ...(ran.get('second') ?? [])].length;
      for (let i = 0; i < 300 && logged() < ids.length; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      const byFirst = ran.get('first') ?? [];
      const bySecond = ran.get('second') ?? [];
      expect([...byFirst, ...bySecond].sort()).toEqual([...ids].sort());
      expect(byFirst.length).toBeGreaterThan(0);
      expect(bySecond.length).toBeGreaterThan(0);
    });
  });
});
