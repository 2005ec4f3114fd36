import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/types.js';
import type { JobRepository } from '../../src/ports/jobs.js';

/**
 * The behavioural suite of the JobRepository port (src/ports/jobs.ts), run unchanged against
 * every adapter: JSON (test/contract/json-jobs.test.ts) and PostgreSQL (test/postgres/jobs.test.ts).
 */
export interface JobsHarness {
  jobs: JobRepository;
  /** Closes the repository (as a process exit would) and opens it again on the same data. */
  reopen(): Promise<JobRepository>;
  cleanup(): Promise<void>;
}

const A: Scope = { tenant_id: 'acme', project_id: 'alpha' };
const B: Scope = { tenant_id: 'acme', project_id: 'beta' };
const T0 = '2025-06-01T10:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

let counter = 0;
const newJob = (i: number, operation = 'aging', payload: unknown = { n: i }) => ({
  job_id: `job${String(++counter).padStart(6, '0')}x${i}`,
  operation,
  payload,
  created_at: at(i),
});

export function runJobRepositoryContract(name: string, make: () => Promise<JobsHarness>): void {
  describe(`JobRepository contract: ${name}`, () => {
    let h: JobsHarness;
    let jobs: JobRepository;
    beforeEach(async () => {
      h = await make();
      jobs = h.jobs;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    it('enqueues pending jobs and reads them back in their scope only', async () => {
      const job = newJob(1, 'compose', { input: { task: 'x' }, ctx: { actor: 'dev' } });
      const record = await jobs.enqueue(A, job);
      expect(record).toEqual({
        job_id: job.job_id, operation: 'compose', status: 'pending', created_at: job.created_at,
        started_at: null, completed_at: null, attempts: 0, result: null, error: null,
      });
      expect(await jobs.get(A, job.job_id)).toEqual(record);
      expect(await jobs.get(B, job.job_id)).toBeNull();
      expect(await jobs.get(A, 'unknown0000')).toBeNull();
      expect(await jobs.list(B, { limit: 10 })).toEqual([]);
    });

    it('lists newest first, filtered by status, at most limit', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await jobs.enqueue(A, newJob(i))).job_id);
      await jobs.enqueue(B, newJob(9));
      await jobs.cancel(A, ids[1], at(20));
      expect((await jobs.list(A, { limit: 10 })).map((j) => j.job_id)).toEqual([...ids].reverse());
      expect((await jobs.list(A, { limit: 2 })).map((j) => j.job_id)).toEqual([ids[4], ids[3]]);
      expect((await jobs.list(A, { status: 'cancelled', limit: 10 })).map((j) => j.job_id)).toEqual([ids[1]]);
      expect(await jobs.list(A, { status: 'running', limit: 10 })).toEqual([]);
    });

    it('claims the oldest pending jobs, at most limit, across scopes, each once', async () => {
      const a = await jobs.enqueue(A, newJob(2, 'aging', { p: 'a' }));
      const b = await jobs.enqueue(B, newJob(1, 'import', { p: 'b' }));
      const c = await jobs.enqueue(A, newJob(3));
      const first = await jobs.claim('w1', 2, at(10));
      expect(first.map((j) => j.job_id)).toEqual([b.job_id, a.job_id]);
      expect(first[0]).toMatchObject({
        status: 'running', attempts: 1, started_at: at(10), heartbeat_at: at(10), locked_by: 'w1',
        tenant_id: 'acme', project_id: 'beta', operation: 'import', payload: { p: 'b' },
      });
      expect((await jobs.claim('w2', 5, at(11))).map((j) => j.job_id)).toEqual([c.job_id]);
      expect(await jobs.claim('w2', 5, at(12))).toEqual([]);
      expect(await jobs.get(A, a.job_id)).toMatchObject({ status: 'running', attempts: 1, started_at: at(10) });
    });

    it('never hands one job to two concurrent claimers', async () => {
      for (let i = 0; i < 12; i++) await jobs.enqueue(i % 2 ? A : B, newJob(i));
      const claims = await Promise.all(['w1', 'w2', 'w3', 'w4'].map((w) => jobs.claim(w, 4, at(30))));
      const ids = claims.flat().map((j) => j.job_id);
      expect(ids).toHaveLength(12);
      expect(new Set(ids).size).toBe(12);
    });

    it('completes and fails only jobs the worker still holds, keeping result or error', async () => {
      const a = await jobs.enqueue(A, newJob(1));
      const b = await jobs.enqueue(A, newJob(2));
      await jobs.claim('w1', 2, at(5));
      expect(await jobs.complete(a.job_id, 'w2', { wrong: true }, at(6))).toBe(false);
      const result = { aged: 2, pruned: 1, remaining: 7, nested: { list: [1, 'two', null] } };
      expect(await jobs.complete(a.job_id, 'w1', result, at(7))).toBe(true);
      expect(await jobs.complete(a.job_id, 'w1', { again: true }, at(8))).toBe(false);
      expect(await jobs.fail(b.job_id, 'w1', 'pattern patterns/x not found', at(9))).toBe(true);
      expect(await jobs.get(A, a.job_id)).toMatchObject({ status: 'completed', result, error: null, completed_at: at(7), attempts: 1 });
      expect(await jobs.get(A, b.job_id)).toMatchObject({ status: 'failed', result: null, error: 'pattern patterns/x not found', completed_at: at(9) });
      expect(await jobs.fail(b.job_id, 'w1', 'late', at(10))).toBe(false);
    });

    it('cancels pending jobs only, and only in their scope', async () => {
      const a = await jobs.enqueue(A, newJob(1));
      const b = await jobs.enqueue(A, newJob(2));
      expect(await jobs.cancel(B, a.job_id, at(3))).toBeNull();
      expect(await jobs.cancel(A, 'unknown0000', at(3))).toBeNull();
      const done = await jobs.cancel(A, a.job_id, at(3));
      expect(done).toEqual({ job: expect.objectContaining({ job_id: a.job_id, status: 'cancelled', completed_at: at(3) }), cancelled: true });
      expect(await jobs.cancel(A, a.job_id, at(4))).toMatchObject({ job: { status: 'cancelled', completed_at: at(3) }, cancelled: false });
      // A cancelled job is never claimed; a running one cannot be cancelled.
      expect((await jobs.claim('w1', 5, at(5))).map((j) => j.job_id)).toEqual([b.job_id]);
      expect(await jobs.cancel(A, b.job_id, at(6))).toMatchObject({ job: { status: 'running' }, cancelled: false });
    });

    it('requeues a job whose worker went silent once, and fails it on the second interruption', async () => {
      const job = await jobs.enqueue(A, newJob(1, 'evaluate'));
      const alive = await jobs.enqueue(A, newJob(2));
      await jobs.claim('w1', 2, at(0));
      await jobs.heartbeat('w1', [alive.job_id], at(100));
      const first = await jobs.requeueStale(at(60), at(120), 2);
      expect(first).toEqual({ requeued: [{ job_id: job.job_id, operation: 'evaluate' }], failed: [] });
      expect(await jobs.get(A, job.job_id)).toMatchObject({ status: 'pending', attempts: 1 });
      expect(await jobs.get(A, alive.job_id)).toMatchObject({ status: 'running' });
      // The silent worker's late completion no longer counts.
      expect(await jobs.complete(job.job_id, 'w1', { late: true }, at(121))).toBe(false);

      const again = await jobs.claim('w2', 5, at(130));
      expect(again).toEqual([expect.objectContaining({ job_id: job.job_id, attempts: 2, locked_by: 'w2' })]);
      const second = await jobs.requeueStale(at(200), at(260), 2);
      expect(second.failed).toEqual(expect.arrayContaining([{ job_id: job.job_id, operation: 'evaluate' }]));
      expect(await jobs.get(A, job.job_id)).toMatchObject({ status: 'failed', attempts: 2, completed_at: at(260), error: expect.stringMatching(/interrupted/) });
      // The other job's worker went silent too: its first interruption puts it back in line.
      expect(second.requeued).toEqual([{ job_id: alive.job_id, operation: 'aging' }]);
      expect((await jobs.claim('w3', 5, at(300))).map((j) => j.job_id)).toEqual([alive.job_id]);
    });

    it('never takes over a job whose owner beats within its own stale window (issue 18, 7)', async () => {
      const job = await jobs.enqueue(A, newJob(1));
      // The owner declares a 60 s window and beats every 15 s; the caller's window is 1 s.
      const owner = 'host:1:abc~60000';
      await jobs.claim(owner, 1, at(0));
      await jobs.heartbeat(owner, [job.job_id], at(15));
      expect(await jobs.requeueStale(at(19), at(20), 2)).toEqual({ requeued: [], failed: [] });
      expect(await jobs.requeueStale(at(74), at(75), 2)).toEqual({ requeued: [], failed: [] });
      expect(await jobs.get(A, job.job_id)).toMatchObject({ status: 'running' });
      // Silent past its own window: now it is abandoned, for any caller.
      expect((await jobs.requeueStale(at(75), at(76), 2)).requeued).toEqual([{ job_id: job.job_id, operation: 'aging' }]);
    });

    it('hands back claims whose answer its worker never got, with the attempt undone (issue 25, 1)', async () => {
      const known = await jobs.enqueue(A, newJob(1));
      const lost = await jobs.enqueue(A, newJob(2));
      const foreign = await jobs.enqueue(B, newJob(3));
      await jobs.claim('w1', 2, at(10)); // known and lost: the worker heard only of `known`
      await jobs.claim('w2', 1, at(11));
      expect(await jobs.releaseLostClaims('w1', [known.job_id])).toEqual([{ job_id: lost.job_id, operation: 'aging' }]);
      expect(await jobs.get(A, lost.job_id)).toMatchObject({ status: 'pending', attempts: 0, started_at: null });
      expect(await jobs.get(A, known.job_id)).toMatchObject({ status: 'running', attempts: 1 });
      expect(await jobs.get(B, foreign.job_id)).toMatchObject({ status: 'running', attempts: 1 });
      // Nothing else is in doubt: a second call changes nothing, and the job is claimable at once.
      expect(await jobs.releaseLostClaims('w1', [known.job_id])).toEqual([]);
      expect(await jobs.claim('w1', 5, at(12))).toEqual([expect.objectContaining({ job_id: lost.job_id, attempts: 1, locked_by: 'w1' })]);
      expect(await jobs.complete(known.job_id, 'w1', {}, at(13))).toBe(true);
    });

    it('purges finished jobs older than the cut-off and leaves the rest', async () => {
      const old = await jobs.enqueue(A, newJob(1));
      const cancelledOld = await jobs.enqueue(A, newJob(2));
      const recent = await jobs.enqueue(A, newJob(3));
      const waiting = await jobs.enqueue(A, newJob(4));
      await jobs.cancel(A, cancelledOld.job_id, at(10));
      await jobs.claim('w1', 2, at(5)); // old, recent
      await jobs.complete(old.job_id, 'w1', {}, at(10));
      await jobs.fail(recent.job_id, 'w1', 'boom', at(1000));
      expect(await jobs.purgeFinished(at(500))).toBe(2);
      expect(await jobs.get(A, old.job_id)).toBeNull();
      expect(await jobs.get(A, cancelledOld.job_id)).toBeNull();
      expect(await jobs.get(A, recent.job_id)).toMatchObject({ status: 'failed' });
      expect(await jobs.get(A, waiting.job_id)).toMatchObject({ status: 'pending' });
      expect(await jobs.purgeFinished(at(500))).toBe(0);
    });

    it('deletes every job of one scope', async () => {
      await jobs.enqueue(A, newJob(1));
      await jobs.enqueue(A, newJob(2));
      const kept = await jobs.enqueue(B, newJob(3));
      expect(await jobs.deleteScope(A)).toBe(2);
      expect(await jobs.list(A, { limit: 10 })).toEqual([]);
      expect(await jobs.get(B, kept.job_id)).not.toBeNull();
    });

    it('wakes subscribers when a job is enqueued', async () => {
      const woken = new Promise<void>((resolve) => {
        const off = jobs.subscribe(() => {
          off();
          resolve();
        });
      });
      // PostgreSQL delivers through LISTEN/NOTIFY: keep enqueueing until the listener is up.
      let stop = false;
      const feeder = (async () => {
        for (let i = 0; !stop; i++) {
          await jobs.enqueue(A, newJob(i));
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      await woken;
      stop = true;
      await feeder;
    });

    it('keeps every job and its state across a reopen', async () => {
      const pending = await jobs.enqueue(A, newJob(1, 'import', { input: { records: [{ task: 't', code: 'c', eval_score: 5 }] } }));
      const done = await jobs.enqueue(A, newJob(2));
      const cancelled = await jobs.enqueue(B, newJob(3));
      const [claimed] = await jobs.claim('w1', 1, at(10));
      expect(claimed.job_id).toBe(pending.job_id);
      const [second] = await jobs.claim('w1', 1, at(11));
      await jobs.complete(second.job_id, 'w1', { purged_count: 3, dry_run: false }, at(12));
      await jobs.cancel(B, cancelled.job_id, at(13));
      const before = await Promise.all([jobs.get(A, pending.job_id), jobs.get(A, done.job_id), jobs.get(B, cancelled.job_id)]);

      jobs = await h.reopen();
      expect(await Promise.all([jobs.get(A, pending.job_id), jobs.get(A, done.job_id), jobs.get(B, cancelled.job_id)])).toEqual(before);
      // The interrupted run is recovered (within the stale window at the latest) with its payload.
      await jobs.requeueStale(at(10_000), at(10_001), 2);
      const [resumed] = await jobs.claim('w2', 5, at(10_002));
      expect(resumed).toMatchObject({ job_id: pending.job_id, attempts: 2, payload: { input: { records: [{ task: 't' }] } } });
    });
  });
}
