import type { JobRecord, JobStatus } from '../contracts/jobs.js';
import type { Scope } from '../core/types.js';

/**
 * The durable job queue behind `Prefer: respond-async` (docs/behavior.md "Jobs").
 * States: pending → running → completed | failed, and pending → cancelled.
 * Times are ISO-8601 strings supplied by the caller (the worker's Clock), so tests set them.
 */
/** A job's state and the record callers see (GET /v1/jobs/{id}), as the contract defines them. */
export type { JobRecord, JobStatus };

/** The record as stored: plus its scope, its input and the worker bookkeeping. */
export interface StoredJob extends JobRecord {
  tenant_id: string;
  project_id: string;
  /** What the operation runs with (validated before enqueueing). */
  payload: unknown;
  /** Last sign of life of the worker running it (null when not running). */
  heartbeat_at: string | null;
  /** Id of the worker running it (null when not running). */
  locked_by: string | null;
}

export interface NewJob {
  job_id: string;
  operation: string;
  payload: unknown;
  created_at: string;
}

/** What requeueStale did: jobs back to pending, and jobs failed for a second interruption. */
export interface StaleOutcome {
  requeued: Pick<StoredJob, 'job_id' | 'operation'>[];
  failed: Pick<StoredJob, 'job_id' | 'operation'>[];
}

export interface JobRepository {
  /** Stores a pending job in `scope` and wakes subscribed workers (in every process). */
  enqueue(scope: Scope, job: NewJob): Promise<JobRecord>;
  /**
   * Atomically moves up to `limit` pending jobs (oldest first) to running for `workerId`:
   * attempts + 1, started_at = heartbeat_at = at. Two workers never claim the same job
   * (PostgreSQL: FOR UPDATE SKIP LOCKED).
   */
  claim(workerId: string, limit: number, at: string): Promise<StoredJob[]>;
  /** Refreshes heartbeat_at of these jobs while `workerId` still runs them. */
  heartbeat(workerId: string, jobIds: string[], at: string): Promise<void>;
  /**
   * running → completed with its result. False when the job is no longer this worker's
   * (it was declared stale and handed to another run): the result is then discarded.
   */
  complete(jobId: string, workerId: string, result: unknown, at: string): Promise<boolean>;
  /** running → failed with an error message; false like complete(). */
  fail(jobId: string, workerId: string, error: string, at: string): Promise<boolean>;
  /**
   * pending → cancelled. null: no such job in this scope. Otherwise the job as it now is and
   * whether this call cancelled it (false: it was already running or finished).
   */
  cancel(scope: Scope, jobId: string, at: string): Promise<{ job: JobRecord; cancelled: boolean } | null>;
  /** The job, or null when absent in this scope. */
  get(scope: Scope, jobId: string): Promise<JobRecord | null>;
  /** Jobs of the scope, newest first, optionally of one status, at most `limit`. */
  list(scope: Scope, opts: { status?: JobStatus; limit: number }): Promise<JobRecord[]>;
  /**
   * Running jobs whose worker has not beaten since `staleBefore` (or never, e.g. left by a
   * process that died): back to pending when attempts < maxAttempts, else failed.
   */
  requeueStale(staleBefore: string, at: string, maxAttempts: number): Promise<StaleOutcome>;
  /**
   * Running jobs locked by `workerId` that are not in `known`: claims whose answer never reached
   * the worker (the connection broke after the claim committed). Back to pending with the
   * attempt undone (the job never started), so they run now rather than after the stale window.
   */
  releaseLostClaims(workerId: string, known: string[]): Promise<Pick<StoredJob, 'job_id' | 'operation'>[]>;
  /** Deletes completed, failed and cancelled jobs that finished before `before`; the count. */
  purgeFinished(before: string): Promise<number>;
  /** Deletes every job of the scope (governance deletion); the count. */
  deleteScope(scope: Scope): Promise<number>;
  /**
   * Calls `listener` when a job may be waiting (an enqueue anywhere, PostgreSQL via
   * LISTEN/NOTIFY). Best effort: workers poll as well. Returns the unsubscribe function.
   */
  subscribe(listener: () => void): () => void;
}

/** Terminal states: nothing changes a job any more. */
export function isFinished(status: JobStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** The public record of a stored job (drops scope, payload and worker bookkeeping). */
export function publicJob(job: JobRecord): JobRecord {
  return {
    job_id: job.job_id,
    operation: job.operation,
    status: job.status,
    created_at: job.created_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    attempts: job.attempts,
    result: job.result,
    error: job.error,
  };
}
