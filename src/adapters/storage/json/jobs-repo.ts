import { targetCovers, type DeletionTarget } from '../../../core/governance.js';
import type { Scope } from '../../../core/types.js';
import { isAbandoned } from '../../../core/job-lease.js';
import {
  isFinished, publicJob, type JobRecord, type JobRepository, type JobStatus, type NewJob, type StaleOutcome, type StoredJob,
} from '../../../ports/jobs.js';
import { assertScope } from './ids.js';
import { applyJobsOp, JobsLog, type JobPatch, type JobsOp } from './jobs-log.js';

export interface JsonJobQueueOptions {
  /** Journal size that triggers a fresh snapshot (default 4 MiB). */
  compactAfterBytes?: number;
}

const DEFAULT_COMPACT_AFTER_BYTES = 4 * 1024 * 1024;

const sameScope = (job: StoredJob, scope: Scope) => job.tenant_id === scope.tenant_id && job.project_id === scope.project_id;

/** Oldest first: creation time, then id (ids are time-ordered too). */
const byAge = (a: StoredJob, b: StoredJob) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0;

/** Jobs hold JSON data only: a JSON round trip copies it and drops what the journal would drop. */
const copy = <T>(value: T): T => (value === undefined ? (null as T) : (JSON.parse(JSON.stringify(value)) as T));

/**
 * The JSON storage's job queue: every job in memory, every change journalled and fsynced
 * before it is acknowledged (jobs-log.ts), so a restart loses no submitted job.
 *
 * Changes run one at a time (a promise chain): each computes its op from the current state,
 * makes it durable, then applies it, so memory never holds what the disk does not.
 *
 * The data path lock guarantees one process per store, so whatever is `running` when the
 * store opens was left by a dead process: such jobs load with no heartbeat and the worker's
 * first stale check requeues them (or fails them on a second interruption) at once.
 * Heartbeats therefore stay in memory; journalling them would only cost fsyncs.
 */
export class JsonJobQueue implements JobRepository {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<() => void>();

  private constructor(
    private readonly jobs: Map<string, StoredJob>,
    private readonly log: JobsLog,
    private readonly compactAfterBytes: number,
  ) {}

  static async open(dataPath: string, opts: JsonJobQueueOptions = {}): Promise<JsonJobQueue> {
    const jobs = new Map<string, StoredJob>();
    const log = await JobsLog.open(dataPath, jobs);
    for (const job of jobs.values()) {
      if (job.status === 'running') jobs.set(job.job_id, { ...job, heartbeat_at: null });
    }
    const queue = new JsonJobQueue(jobs, log, opts.compactAfterBytes ?? DEFAULT_COMPACT_AFTER_BYTES);
    // Start each run with a compact journal (purged jobs leave the files too).
    if (log.bytes > 0) await queue.serial(() => log.compact(jobs.values()));
    return queue;
  }

  async enqueue(scope: Scope, job: NewJob): Promise<JobRecord> {
    assertScope(scope);
    const stored: StoredJob = {
      job_id: job.job_id,
      operation: job.operation,
      status: 'pending',
      created_at: job.created_at,
      started_at: null,
      completed_at: null,
      attempts: 0,
      result: null,
      error: null,
      tenant_id: scope.tenant_id,
      project_id: scope.project_id,
      payload: copy(job.payload),
      heartbeat_at: null,
      locked_by: null,
    };
    await this.change(() => {
      if (this.jobs.has(job.job_id)) throw new Error(`job ${job.job_id} already exists`);
      return { op: { op: 'add', job: stored }, value: undefined };
    });
    for (const listener of this.listeners) listener();
    return publicJob(copy(stored));
  }

  claim(workerId: string, limit: number, at: string): Promise<StoredJob[]> {
    return this.change(() => {
      const picked = [...this.jobs.values()].filter((j) => j.status === 'pending').sort(byAge).slice(0, Math.max(0, limit));
      const patches: JobPatch[] = picked.map((j) => ({
        job_id: j.job_id, status: 'running', attempts: j.attempts + 1, started_at: at, heartbeat_at: at, locked_by: workerId,
      }));
      return { op: patches.length > 0 ? { op: 'set', jobs: patches } : null, value: () => picked.map((j) => copy(this.jobs.get(j.job_id)!)) };
    }).then((read) => read());
  }

  async heartbeat(workerId: string, jobIds: string[], at: string): Promise<void> {
    for (const id of jobIds) {
      const job = this.jobs.get(id);
      if (job && job.status === 'running' && job.locked_by === workerId) this.jobs.set(id, { ...job, heartbeat_at: at });
    }
  }

  complete(jobId: string, workerId: string, result: unknown, at: string): Promise<boolean> {
    return this.finish(jobId, workerId, { status: 'completed', result: copy(result), error: null, completed_at: at });
  }

  fail(jobId: string, workerId: string, error: string, at: string): Promise<boolean> {
    return this.finish(jobId, workerId, { status: 'failed', result: null, error, completed_at: at });
  }

  async cancel(scope: Scope, jobId: string, at: string): Promise<{ job: JobRecord; cancelled: boolean } | null> {
    type Outcome = { job: JobRecord; cancelled: boolean } | null;
    const outcome = await this.change<() => Outcome>(() => {
      const job = this.jobs.get(jobId);
      if (!job || !sameScope(job, scope)) return { op: null, value: () => null };
      if (job.status !== 'pending') return { op: null, value: () => ({ job: publicJob(copy(job)), cancelled: false }) };
      const patch: JobPatch = { job_id: jobId, status: 'cancelled', completed_at: at };
      return { op: { op: 'set', jobs: [patch] }, value: () => ({ job: publicJob(copy(this.jobs.get(jobId)!)), cancelled: true }) };
    });
    return outcome();
  }

  async get(scope: Scope, jobId: string): Promise<JobRecord | null> {
    const job = this.jobs.get(jobId);
    return job && sameScope(job, scope) ? publicJob(copy(job)) : null;
  }

  async list(scope: Scope, opts: { status?: JobStatus; limit: number }): Promise<JobRecord[]> {
    const matching = [...this.jobs.values()].filter((j) => sameScope(j, scope) && (opts.status === undefined || j.status === opts.status));
    return matching.sort((a, b) => byAge(b, a)).slice(0, Math.max(0, Math.floor(opts.limit))).map((j) => publicJob(copy(j)));
  }

  requeueStale(staleBefore: string, at: string, maxAttempts: number): Promise<StaleOutcome> {
    return this.change(() => {
      const outcome: StaleOutcome = { requeued: [], failed: [] };
      const patches: JobPatch[] = [];
      for (const job of this.jobs.values()) {
        if (job.status !== 'running' || !isAbandoned(job, staleBefore, at)) continue;
        const ref = { job_id: job.job_id, operation: job.operation };
        if (job.attempts >= maxAttempts) {
          outcome.failed.push(ref);
          patches.push({
            job_id: job.job_id, status: 'failed', completed_at: at, heartbeat_at: null, locked_by: null,
            error: `interrupted ${job.attempts} times (its worker stopped without finishing it)`,
          });
        } else {
          outcome.requeued.push(ref);
          patches.push({ job_id: job.job_id, status: 'pending', started_at: null, heartbeat_at: null, locked_by: null });
        }
      }
      return { op: patches.length > 0 ? { op: 'set', jobs: patches } : null, value: outcome };
    });
  }

  releaseLostClaims(workerId: string, known: string[]): Promise<Pick<StoredJob, 'job_id' | 'operation'>[]> {
    return this.change(() => {
      const keep = new Set(known);
      const lost = [...this.jobs.values()].filter((j) => j.status === 'running' && j.locked_by === workerId && !keep.has(j.job_id));
      const patches: JobPatch[] = lost.map((j) => ({
        job_id: j.job_id, status: 'pending', attempts: Math.max(0, j.attempts - 1), started_at: null, heartbeat_at: null, locked_by: null,
      }));
      return { op: patches.length > 0 ? { op: 'set', jobs: patches } : null, value: lost.map((j) => ({ job_id: j.job_id, operation: j.operation })) };
    });
  }

  purgeFinished(before: string): Promise<number> {
    return this.remove((j) => isFinished(j.status) && j.completed_at !== null && j.completed_at < before);
  }

  deleteScope(scope: Scope): Promise<number> {
    assertScope(scope);
    return this.remove((j) => sameScope(j, scope));
  }

  /**
   * Governance deletion: the target's jobs, except running ones of the kept operations. The log
   * is then compacted, always (a replayed deletion finds nothing left to remove but may still
   * find the jobs' lines in the journal), so their payloads leave the files, not only the queue.
   */
  async deleteTarget(target: DeletionTarget, keepRunningOperations: string[]): Promise<number> {
    const removed = await this.remove((j) => this.inTarget(j, target, keepRunningOperations));
    await this.serial(() => this.log.compact(this.jobs.values()));
    return removed;
  }

  /** What deleteTarget would delete now. */
  countTarget(target: DeletionTarget, keepRunningOperations: string[]): number {
    return [...this.jobs.values()].filter((j) => this.inTarget(j, target, keepRunningOperations)).length;
  }

  private inTarget(j: StoredJob, target: DeletionTarget, keep: string[]): boolean {
    return targetCovers(target, j) && !(j.status === 'running' && keep.includes(j.operation));
  }

  subscribe(listener: () => void): () => void {
    // A wrapper per subscription, so subscribing the same function twice stays two subscriptions.
    const entry = () => listener();
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  async close(): Promise<void> {
    await this.chain.catch(() => undefined);
    await this.log.close();
  }

  private remove(match: (job: StoredJob) => boolean): Promise<number> {
    return this.change(() => {
      const ids = [...this.jobs.values()].filter(match).map((j) => j.job_id);
      return { op: ids.length > 0 ? { op: 'del', ids } : null, value: ids.length };
    });
  }

  private finish(jobId: string, workerId: string, patch: Omit<JobPatch, 'job_id'>): Promise<boolean> {
    return this.change(() => {
      const job = this.jobs.get(jobId);
      if (!job || job.status !== 'running' || job.locked_by !== workerId) return { op: null, value: false };
      return { op: { op: 'set', jobs: [{ job_id: jobId, ...patch, heartbeat_at: null, locked_by: null }] }, value: true };
    });
  }

  /**
   * Runs `decide` after every earlier change, journals its op (if any), applies it, and
   * resolves with its value. A value that is a function is returned as is: callers use that
   * to read the state AFTER the op was applied.
   */
  private change<T>(decide: () => { op: JobsOp | null; value: T }): Promise<T> {
    return this.serial(async () => {
      const { op, value } = decide();
      if (op) {
        await this.log.write(op);
        applyJobsOp(this.jobs, op);
        if (this.log.bytes >= this.compactAfterBytes) {
          // The op is durable already; a failed compaction loses nothing (the journal still
          // holds every line) and is retried after the next change.
          await this.log.compact(this.jobs.values()).catch(() => undefined);
        }
      }
      return value;
    });
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work, work);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

/**
 * The queue's asynchronous operations as a plain object: the storage's timing wrapper walks
 * own properties (not class prototypes). `subscribe` is synchronous and stays outside it.
 */
export function queueOperations(queue: JsonJobQueue): Omit<JobRepository, 'subscribe'> {
  return {
    enqueue: (scope, job) => queue.enqueue(scope, job),
    claim: (workerId, limit, at) => queue.claim(workerId, limit, at),
    heartbeat: (workerId, ids, at) => queue.heartbeat(workerId, ids, at),
    complete: (id, workerId, result, at) => queue.complete(id, workerId, result, at),
    fail: (id, workerId, error, at) => queue.fail(id, workerId, error, at),
    cancel: (scope, id, at) => queue.cancel(scope, id, at),
    get: (scope, id) => queue.get(scope, id),
    list: (scope, opts) => queue.list(scope, opts),
    requeueStale: (staleBefore, at, maxAttempts) => queue.requeueStale(staleBefore, at, maxAttempts),
    releaseLostClaims: (workerId, known) => queue.releaseLostClaims(workerId, known),
    purgeFinished: (before) => queue.purgeFinished(before),
    deleteScope: (scope) => queue.deleteScope(scope),
  };
}
