import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createJsonStorage, type JsonStorage } from '../../src/adapters/storage/json/index.js';
import { JOBS_JOURNAL_FILE, JOBS_SNAPSHOT_FILE } from '../../src/adapters/storage/json/jobs-log.js';
import { JsonJobQueue } from '../../src/adapters/storage/json/jobs-repo.js';
import type { JobRepository } from '../../src/ports/jobs.js';
import { runJobRepositoryContract } from './jobs.contract.js';

function jobsOf(storage: JsonStorage): JobRepository {
  return storage.jobs;
}

runJobRepositoryContract('json', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-jobs-'));
  let storage = await createJsonStorage({ dataPath: dir });
  return {
    jobs: jobsOf(storage),
    async reopen() {
      await storage.close();
      storage = await createJsonStorage({ dataPath: dir });
      return jobsOf(storage);
    },
    async cleanup() {
      await storage.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const SCOPE = { tenant_id: 'default', project_id: 'default' };
const job = (id: string, payload: unknown = { big: 'x'.repeat(2000) }) => ({ job_id: id, operation: 'import', payload, created_at: '2025-01-01T00:00:00.000Z' });

describe('JSON job queue specifics', () => {
  it('treats jobs left running by the previous process as stale at once (the data path lock proves it dead)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-jobs-'));
    try {
      let queue = await JsonJobQueue.open(dir);
      await queue.enqueue(SCOPE, job('a1'));
      await queue.claim('w1', 1, '2025-01-01T00:00:10.000Z');
      await queue.heartbeat('w1', ['a1'], '2025-01-01T00:00:50.000Z');
      await queue.close();

      queue = await JsonJobQueue.open(dir);
      // A cut-off before its last heartbeat: only the restart makes it stale.
      const outcome = await queue.requeueStale('2025-01-01T00:00:00.000Z', '2025-01-01T00:01:00.000Z', 2);
      expect(outcome.requeued).toEqual([{ job_id: 'a1', operation: 'import' }]);
      await queue.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('compacts its journal into a snapshot and reloads the same queue; a torn last line is dropped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-jobs-'));
    try {
      let queue = await JsonJobQueue.open(dir, { compactAfterBytes: 4096 });
      for (let i = 0; i < 10; i++) await queue.enqueue(SCOPE, job(`b${i}`));
      await queue.claim('w1', 4, '2025-01-01T00:00:10.000Z');
      await queue.complete('b0', 'w1', { imported: 1, skipped: 0, total: 1 }, '2025-01-01T00:00:11.000Z');
      await queue.cancel(SCOPE, 'b9', '2025-01-01T00:00:12.000Z');
      const before = await queue.list(SCOPE, { limit: 100 });
      await queue.close();
      expect((await readFile(join(dir, JOBS_SNAPSHOT_FILE), 'utf8')).length).toBeGreaterThan(0);
      // A crash in the middle of an append leaves half a line behind.
      await appendFile(join(dir, JOBS_JOURNAL_FILE), '{"op":"del","ids":["b1"],"se');

      queue = await JsonJobQueue.open(dir, { compactAfterBytes: 4096 });
      expect(await queue.list(SCOPE, { limit: 100 })).toEqual(before);
      await queue.enqueue(SCOPE, job('c1', { small: true }));
      await queue.close();
      queue = await JsonJobQueue.open(dir);
      expect((await queue.list(SCOPE, { limit: 100 })).map((j) => j.job_id)).toEqual(['c1', ...before.map((j) => j.job_id)]);
      await queue.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
