import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { StorageUnavailableError } from '../../src/core/errors.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { llmEnv, makeLlm } from '../llm/helpers.js';
import { ManualClock, startServer, type TestServer } from './helpers.js';
import { accepted, pollJob, scriptEverything } from './jobs-support.js';

/** The worker of one process: its concurrency bound, the 7-day cleanup and stale recovery. */

const fake = await useFakeLlm();
let t: TestServer | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const DAY = 24 * 3600 * 1000;
const ASYNC = { prefer: 'respond-async' };

describe('job runner', () => {
  it('runs at most SERVICE_JOB_MAX_CONCURRENT jobs at once and still finishes them all', async () => {
    const env = llmEnv(fake, 'provider_a', { SERVICE_JOB_MAX_CONCURRENT: '2', SERVICE_JOB_POLL_INTERVAL: '0.05', SERVICE_RATE_LIMIT_EXPENSIVE: '100' });
    t = await startServer(env, { llm: makeLlm(loadConfig(env)) });
    scriptEverything(fake, { delayMs: 80 });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(accepted(await t.call('POST', '/v1/compose', { task: `Read in${i}.csv, write out${i}.md` }, ASYNC)));
    for (const id of ids) expect((await pollJob(t, id)).status).toBe('completed');
    expect(fake.maxInFlight).toBe(2);
    expect(fake.chatRequests()).toHaveLength(6);
  });

  it('deletes finished jobs once they are 7 days old, and only then', async () => {
    const clock = new ManualClock(new Date('2025-05-01T00:00:00.000Z'));
    t = await startServer({ SERVICE_JOB_POLL_INTERVAL: '0.05' }, { clock });
    const done = accepted(await t.call('POST', '/v1/aging', undefined, ASYNC));
    expect((await pollJob(t, done)).status).toBe('completed');
    await t.app.jobRunner.stop();
    const waiting = accepted(await t.call('POST', '/v1/aging', undefined, ASYNC));
    t.app.jobRunner.start();
    await pollJob(t, waiting); // started again: the waiting job ran too (and finished now)

    clock.advance(6 * DAY);
    await t.app.jobRunner.wake();
    expect((await t.call('GET', `/v1/jobs/${done}`)).statusCode).toBe(200);
    clock.advance(1 * DAY + 1000);
    await t.app.jobRunner.wake();
    expect((await t.call('GET', `/v1/jobs/${done}`)).statusCode).toBe(404);
    expect((await t.call('GET', '/v1/jobs')).json().count).toBe(0);
  });

  it('recovers a job its worker abandoned: back to pending once, run again, completed once', async () => {
    const clock = new ManualClock(new Date('2025-05-01T00:00:00.000Z'));
    t = await startServer({ SERVICE_JOB_POLL_INTERVAL: '0.05', SERVICE_JOB_STALE_SECONDS: '60' }, { clock });
    await t.app.jobRunner.stop();
    const id = accepted(await t.call('POST', '/v1/aging', undefined, ASYNC));
    // Another worker claims it and then goes silent.
    const queue = t.app.deps.storage.jobs;
    expect(await queue.claim('silent-worker', 1, clock.now().toISOString())).toHaveLength(1);
    t.app.jobRunner.start();
    await t.app.jobRunner.wake();
    expect((await t.call('GET', `/v1/jobs/${id}`)).json()).toMatchObject({ status: 'running', attempts: 1 });

    clock.advance(61_000);
    await t.app.jobRunner.wake();
    const job = await pollJob(t, id);
    expect(job).toMatchObject({ status: 'completed', attempts: 2, result: { aged: 0, pruned: 0, remaining: 0 } });
    expect(await t.app.metrics.render()).toMatch(/service_jobs_completed_total\{operation="aging",status="completed"\} 1\n/);
  });

  it('runs at once a job whose claim committed but whose answer was lost, without waiting for the stale window', async () => {
    // The manual clock never moves: stale recovery (60 s) cannot be what runs the job.
    const clock = new ManualClock(new Date('2025-05-01T00:00:00.000Z'));
    t = await startServer({ SERVICE_JOB_POLL_INTERVAL: '0.05', SERVICE_JOB_STALE_SECONDS: '60' }, { clock });
    await t.app.jobRunner.stop();
    const id = accepted(await t.call('POST', '/v1/aging', undefined, ASYNC));
    const queue = t.app.deps.storage.jobs;
    const claim = queue.claim;
    let lostAnswers = 0;
    queue.claim = async (workerId, limit, at) => {
      const claimed = await claim(workerId, limit, at);
      if (claimed.length === 0 || lostAnswers > 0) return claimed;
      lostAnswers++;
      throw new StorageUnavailableError('connection lost after the claim was sent');
    };
    t.app.jobRunner.start();
    const job = await pollJob(t, id);
    expect(lostAnswers).toBe(1);
    expect(job).toMatchObject({ status: 'completed', attempts: 1, result: { aged: 0, pruned: 0, remaining: 0 } });
  });
});
