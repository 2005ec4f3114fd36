import { afterEach, describe, expect, it } from 'vitest';
import { JobListResponse, JobRecord } from '../../src/contracts/jobs.js';
import { loadConfig } from '../../src/config/index.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { llmEnv, makeLlm } from '../llm/helpers.js';
import { learnBody, ManualClock, startServer, type TestServer } from './helpers.js';
import { accepted, isComposer, pollJob, scriptEverything } from './jobs-support.js';

const fake = await useFakeLlm();
let t: TestServer | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const FAST = { SERVICE_JOB_POLL_INTERVAL: '0.05' };

/** A server whose LLM is the fake provider (JSON storage, dev auth, offline embedder). */
async function llmServer(extra: Record<string, string> = {}, clock?: ManualClock): Promise<TestServer> {
  const env = llmEnv(fake, 'provider_a', { ...FAST, ...extra });
  return startServer(env, { llm: makeLlm(loadConfig(env)), ...(clock ? { clock } : {}) });
}

const SYNC = { 'x-project-id': 'sync-side' };
const ASYNC = { 'x-project-id': 'async-side', prefer: 'respond-async' };
const ASYNC_READ = { 'x-project-id': 'async-side' };

const IMPORTED = [0, 1, 2].map((i) => ({
  task: `Parse the legacy report number ${i} into rows`,
  code: `def parse_${i}(path):\n    return open(path).read().splitlines()`,
  eval_score: 5 + i,
  created_at: '2023-01-01T00:00:00.000Z',
  updated_at: '2023-01-01T00:00:00.000Z',
}));

describe('Prefer: respond-async', () => {
  it('answers 202 and the job ends with exactly the synchronous response of the same request', async () => {
    const clock = new ManualClock(new Date('2025-03-01T12:00:00.000Z'));
    t = await llmServer({}, clock);
    scriptEverything(fake);
    const server = t;

    // The same request on two projects holding the same data: synchronously on one, as a job on the other.
    const compare = async (url: string, body?: unknown): Promise<unknown> => {
      const sync = await server.call('POST', url, body, SYNC);
      expect(sync.statusCode, sync.body).toBe(200);
      const id = accepted(await server.call('POST', url, body, ASYNC));
      const job = JobRecord.parse(await pollJob(server, id, ASYNC_READ));
      expect(job.status, String(job.error)).toBe('completed');
      expect(job.result).toEqual(sync.json());
      expect(job).toMatchObject({ attempts: 1, error: null, started_at: expect.any(String), completed_at: expect.any(String) });
      return job.result;
    };

    await compare('/v1/compose', { task: 'Read sales.csv and write report.md with the monthly totals' });
    for (let i = 0; i < 2; i++) await compare('/v1/evaluate', { task: 'average of a list', code: 'def avg(xs): return sum(xs) / len(xs)', num_evals: 2 });
    const evolved = await compare('/v1/evolve', { role: 'python developer', current_prompt: 'Write the code.', num_issues: 3 });
    expect(evolved).toMatchObject({ accepted: true, improved_prompt: expect.any(String) });
    expect(await compare('/v1/import', { records: IMPORTED })).toEqual({ imported: 3, skipped: 0, total: 3 });
    for (const side of [SYNC, ASYNC_READ]) {
      for (const task of ['Sum the rows of a CSV file', 'Resize every image in a folder']) {
        expect((await server.call('POST', '/v1/learn', learnBody(task), side)).statusCode).toBe(200);
      }
    }
    await compare('/v1/analytics/rollup', { window: 'daily' });
    clock.advance(30 * 7 * 24 * 3600 * 1000);
    const aged = await compare('/v1/aging');
    expect(aged).toMatchObject({ remaining: 5 });
    await compare('/v1/feedback/decay');
    expect(await compare('/v1/governance/retention/apply', { dry_run: false })).toEqual({ purged_count: 3, dry_run: false });

    const metrics = await t.app.metrics.render();
    for (const op of ['compose', 'evaluate', 'evolve', 'import', 'analytics_rollup', 'aging', 'feedback_decay', 'retention_apply']) {
      expect(metrics).toMatch(new RegExp(`service_jobs_submitted_total\\{operation="${op}"\\} [12]`));
      expect(metrics).toMatch(new RegExp(`service_jobs_completed_total\\{operation="${op}",status="completed"\\} [12]`));
    }
  });

  it('validates before queueing: bad input is a synchronous 422 and no job exists', async () => {
    t = await llmServer();
    const bad = await t.call('POST', '/v1/evaluate', { code: '', num_evals: 99 }, ASYNC);
    expect(bad.statusCode).toBe(422);
    expect((await t.call('POST', '/v1/analytics/rollup', { window: 'yearly' }, ASYNC)).statusCode).toBe(422);
    expect((await t.call('POST', '/v1/aging', { unexpected: true }, ASYNC)).statusCode).toBe(422);
    const list = JobListResponse.parse((await t.call('GET', '/v1/jobs', undefined, ASYNC_READ)).json());
    expect(list).toEqual({ jobs: [], count: 0 });
  });

  it('refuses LLM operations up front when no LLM is configured (501), without queueing', async () => {
    t = await startServer(FAST);
    const res = await t.call('POST', '/v1/compose', { task: 'anything at all' }, ASYNC);
    expect(res.statusCode).toBe(501);
    expect((await t.call('GET', '/v1/jobs', undefined, ASYNC_READ)).json().count).toBe(0);
  });

  it('records a failing operation as failed with the error the synchronous route would give', async () => {
    t = await llmServer();
    const id = accepted(await t.call('POST', '/v1/evaluate', { code: 'x = 1', pattern_key: 'patterns/nosuchpattern' }, ASYNC));
    const job = await pollJob(t, id, ASYNC_READ);
    expect(job).toMatchObject({ status: 'failed', result: null, error: 'pattern patterns/nosuchpattern not found', attempts: 1 });
    expect(await t.app.metrics.render()).toMatch(/service_jobs_completed_total\{operation="evaluate",status="failed"\} 1/);
  });

  it('accepts the preference among others and case-insensitively', async () => {
    t = await startServer(FAST);
    const res = await t.call('POST', '/v1/aging', undefined, { prefer: 'handling=lenient, Respond-Async; wait=5' });
    const id = accepted(res);
    expect(res.headers['preference-applied']).toBe('respond-async');
    expect(await pollJob(t, id)).toMatchObject({ status: 'completed', result: { aged: 0, pruned: 0, remaining: 0 } });
    // Without the preference the same endpoint stays synchronous.
    expect((await t.call('POST', '/v1/aging', undefined, { prefer: 'return=minimal' })).json()).toEqual({ aged: 0, pruned: 0, remaining: 0, dry_run: false });
  });
});

describe('jobs API', () => {
  it('cancels pending jobs only: 200 with the job, then 409; running and finished jobs are 409', async () => {
    t = await llmServer();
    await t.app.jobRunner.stop(); // nothing runs: submitted jobs stay pending
    const id = accepted(await t.call('POST', '/v1/aging', undefined, ASYNC));
    const cancelled = await t.call('POST', `/v1/jobs/${id}/cancel`, undefined, ASYNC_READ);
    expect(cancelled.statusCode).toBe(200);
    expect(JobRecord.parse(cancelled.json())).toMatchObject({ job_id: id, operation: 'aging', status: 'cancelled', attempts: 0, completed_at: expect.any(String) });
    expect((await t.call('POST', `/v1/jobs/${id}/cancel`, undefined, ASYNC_READ)).statusCode).toBe(409);
    expect(await t.app.metrics.render()).toMatch(/service_jobs_completed_total\{operation="aging",status="cancelled"\} 1/);

    // A job caught mid-run (slow LLM reply), then after it finished.
    t.app.jobRunner.start();
    scriptEverything(fake, { delayMs: 400 });
    const slow = accepted(await t.call('POST', '/v1/compose', { task: 'Read sales.csv and write report.md' }, ASYNC));
    await pollJob(t, slow, ASYNC_READ, (job) => job.status === 'running');
    const whileRunning = await t.call('POST', `/v1/jobs/${slow}/cancel`, undefined, ASYNC_READ);
    expect(whileRunning.statusCode).toBe(409);
    expect(whileRunning.json().detail).toMatch(/running/);
    expect((await pollJob(t, slow, ASYNC_READ)).status).toBe('completed');
    expect((await t.call('POST', `/v1/jobs/${slow}/cancel`, undefined, ASYNC_READ)).statusCode).toBe(409);
    expect(fake.chatRequests().filter((r) => isComposer(r.call!))).toHaveLength(1);
  });

  it('keeps jobs inside their scope: another project sees 404 and an empty list', async () => {
    t = await startServer(FAST);
    const id = accepted(await t.call('POST', '/v1/aging', undefined, { 'x-project-id': 'alpha', prefer: 'respond-async' }));
    await pollJob(t, id, { 'x-project-id': 'alpha' });
    const other = { 'x-project-id': 'beta' };
    expect((await t.call('GET', `/v1/jobs/${id}`, undefined, other)).statusCode).toBe(404);
    expect((await t.call('POST', `/v1/jobs/${id}/cancel`, undefined, other)).statusCode).toBe(404);
    expect((await t.call('GET', '/v1/jobs', undefined, other)).json()).toEqual({ jobs: [], count: 0 });
    expect((await t.call('GET', '/v1/jobs', undefined, { 'x-project-id': 'alpha' })).json().count).toBe(1);
  });

  it('answers 404 for unknown or malformed ids without touching storage', async () => {
    t = await startServer(FAST);
    for (const id of ['nonexistent', '0000000000000000zz', 'does-not-exist', '..%2F..%2Fetc', 'a'.repeat(90)]) {
      expect((await t.call('GET', `/v1/jobs/${id}`)).statusCode).toBe(404);
      expect((await t.call('POST', `/v1/jobs/${id}/cancel`)).statusCode).toBe(404);
    }
  });

  it('lists newest first with a status filter and a 1-100 limit (default 20)', async () => {
    t = await startServer(FAST);
    await t.app.jobRunner.stop();
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push(accepted(await t.call('POST', '/v1/aging', undefined, { prefer: 'respond-async' })));
    await t.call('POST', `/v1/jobs/${ids[0]}/cancel`);

    const all = JobListResponse.parse((await t.call('GET', '/v1/jobs')).json());
    expect(all.count).toBe(20);
    expect(all.jobs.map((j) => j.job_id)).toEqual(ids.slice(-20).reverse());
    const cancelled = JobListResponse.parse((await t.call('GET', '/v1/jobs?status=cancelled&limit=100')).json());
    expect(cancelled.jobs.map((j) => j.job_id)).toEqual([ids[0]]);
    expect((await t.call('GET', '/v1/jobs?status=pending&limit=5')).json().count).toBe(5);
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'status=done', 'other=1']) {
      expect((await t.call('GET', `/v1/jobs?${q}`)).statusCode).toBe(422);
    }
  });

  it('lets a reader list and read jobs but not cancel them (jobs:cancel is editor)', async () => {
    t = await startServer({ ...FAST, SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: 'k-reader', SERVICE_ENV_AUTH_ROLE: 'reader' });
    const auth = { authorization: 'Bearer k-reader' };
    expect((await t.call('GET', '/v1/jobs', undefined, auth)).statusCode).toBe(200);
    expect((await t.call('POST', '/v1/aging', undefined, { ...auth, prefer: 'respond-async' })).statusCode).toBe(403);
    const res = await t.call('POST', '/v1/jobs/abc/cancel', undefined, auth);
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toMatch(/jobs:cancel/);
  });
});
