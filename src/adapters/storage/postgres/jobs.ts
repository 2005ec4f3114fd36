import type { Scope } from '../../../core/types.js';
import type { JobRecord, JobRepository, JobStatus, NewJob, StaleOutcome, StoredJob } from '../../../ports/jobs.js';
import { silentLogger, type Logger } from '../../../ports/observability.js';
import type { Db } from './db.js';
import { JobListener, JOBS_CHANNEL } from './job-listener.js';
import { iso } from './rows.js';


const PUBLIC_COLUMNS = 'id, operation, status, created_at, started_at, completed_at, attempts, result, error';
const STORED_COLUMNS = `${PUBLIC_COLUMNS}, tenant_id, project_id, payload, heartbeat_at, locked_by`;

interface JobRow {
  id: string;
  operation: string;
  status: JobStatus;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  attempts: number;
  result: unknown;
  error: string | null;
}

interface StoredJobRow extends JobRow {
  tenant_id: string;
  project_id: string;
  payload: unknown;
  heartbeat_at: Date | null;
  locked_by: string | null;
}

function rowToJob(r: JobRow): JobRecord {
  return {
    job_id: r.id,
    operation: r.operation,
    status: r.status,
    created_at: iso(r.created_at),
    started_at: iso(r.started_at),
    completed_at: iso(r.completed_at),
    attempts: r.attempts,
    result: r.result ?? null,
    error: r.error,
  };
}

function rowToStored(r: StoredJobRow): StoredJob {
  return {
    ...rowToJob(r),
    tenant_id: r.tenant_id,
    project_id: r.project_id,
    payload: r.payload,
    heartbeat_at: iso(r.heartbeat_at),
    locked_by: r.locked_by,
  };
}

/** jsonb parameters go over the wire as JSON text; undefined (no value) is stored as null. */
const asJson = (value: unknown) => JSON.stringify(value ?? null);

export interface PostgresJobRepository extends JobRepository {
  /** Stops listening (the pool belongs to whoever passed it in). */
  close(): Promise<void>;
}

export interface PostgresJobOptions {
  /** Connection string for the dedicated LISTEN connection (null: polling only). */
  listenUrl: string | null;
  logger?: Logger;
}

/**
 * The job queue in the `jobs` table (migration 0001). Several server processes share it:
 * claims use `FOR UPDATE SKIP LOCKED`, so each pending job goes to exactly one worker; every
 * state change is one statement guarded by the expected state (and worker), so a late
 * completion by a worker that lost its job to stale recovery changes nothing. An enqueue
 * NOTIFYs in the same statement; workers LISTEN on one dedicated connection and poll too.
 */
export function createPostgresJobRepository(db: Db, opts: PostgresJobOptions): PostgresJobRepository {
  const logger = opts.logger ?? silentLogger;
  const listener = opts.listenUrl ? new JobListener(opts.listenUrl, logger) : null;

  return {
    async enqueue(scope: Scope, job: NewJob) {
      // pg_notify inside the statement: the notification is delivered when the insert commits.
      const res = await db.query<JobRow>(
        `WITH added AS (
           INSERT INTO jobs (id, tenant_id, project_id, operation, status, payload, attempts, created_at)
           VALUES ($1, $2, $3, $4, 'pending', $5, 0, $6) RETURNING ${PUBLIC_COLUMNS}
         ) SELECT added.*, pg_notify('${JOBS_CHANNEL}', '') IS NULL AS notified FROM added`,
        [job.job_id, scope.tenant_id, scope.project_id, job.operation, asJson(job.payload), job.created_at],
        'jobs.enqueue',
      );
      return rowToJob(res.rows[0]);
    },

    async claim(workerId, limit, at) {
      if (limit <= 0) return [];
      // MATERIALIZED: the locking pick runs exactly once. As a plain IN (subquery) the planner
      // may rescan it, and each SKIP LOCKED rescan can pick other rows (more than `limit`).
      const res = await db.query<StoredJobRow>(
        `WITH picked AS MATERIALIZED (
           SELECT id FROM jobs WHERE status = 'pending' ORDER BY created_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
         )
         UPDATE jobs SET status = 'running', attempts = attempts + 1, started_at = $3, heartbeat_at = $3, locked_by = $1
         FROM picked WHERE jobs.id = picked.id
         RETURNING ${STORED_COLUMNS.split(', ').map((c) => `jobs.${c}`).join(', ')}`,
        [workerId, Math.floor(limit), at],
        'jobs.claim',
      );
      // RETURNING has no order: oldest first, as claimed.
      return res.rows.map(rowToStored).sort((a, b) => (a.created_at === b.created_at ? (a.job_id < b.job_id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
    },

    async heartbeat(workerId, jobIds, at) {
      if (jobIds.length === 0) return;
      await db.query(
        `UPDATE jobs SET heartbeat_at = $3 WHERE id = ANY($1) AND status = 'running' AND locked_by = $2`,
        [jobIds, workerId, at],
        'jobs.heartbeat',
      );
    },

    async complete(jobId, workerId, result, at) {
      const res = await db.query(
        `UPDATE jobs SET status = 'completed', result = $3, error = NULL, completed_at = $4, heartbeat_at = NULL, locked_by = NULL
         WHERE id = $1 AND status = 'running' AND locked_by = $2`,
        [jobId, workerId, asJson(result), at],
        'jobs.complete',
      );
      return (res.rowCount ?? 0) > 0;
    },

    async fail(jobId, workerId, error, at) {
      const res = await db.query(
        `UPDATE jobs SET status = 'failed', result = NULL, error = $3, completed_at = $4, heartbeat_at = NULL, locked_by = NULL
         WHERE id = $1 AND status = 'running' AND locked_by = $2`,
        [jobId, workerId, error, at],
        'jobs.fail',
      );
      return (res.rowCount ?? 0) > 0;
    },

    async cancel(scope, jobId, at) {
      // One statement: the update (when still pending) and the row as it now is.
      const res = await db.query<JobRow & { cancelled: boolean }>(
        `WITH changed AS (
           UPDATE jobs SET status = 'cancelled', completed_at = $4
           WHERE id = $1 AND tenant_id = $2 AND project_id = $3 AND status = 'pending'
           RETURNING ${PUBLIC_COLUMNS}
         )
         SELECT changed.*, true AS cancelled FROM changed
         UNION ALL
         SELECT ${PUBLIC_COLUMNS}, false AS cancelled FROM jobs
         WHERE id = $1 AND tenant_id = $2 AND project_id = $3 AND NOT EXISTS (SELECT 1 FROM changed)`,
        [jobId, scope.tenant_id, scope.project_id, at],
        'jobs.cancel',
      );
      const row = res.rows[0];
      return row ? { job: rowToJob(row), cancelled: row.cancelled } : null;
    },

    async get(scope, jobId) {
      const res = await db.query<JobRow>(
        `SELECT ${PUBLIC_COLUMNS} FROM jobs WHERE id = $1 AND tenant_id = $2 AND project_id = $3`,
        [jobId, scope.tenant_id, scope.project_id],
        'jobs.get',
      );
      return res.rows[0] ? rowToJob(res.rows[0]) : null;
    },

    async list(scope, opts) {
      const params: unknown[] = [scope.tenant_id, scope.project_id, Math.max(0, Math.floor(opts.limit))];
      let statusFilter = '';
      if (opts.status !== undefined) {
        params.push(opts.status);
        statusFilter = `AND status = $${params.length}`;
      }
      const res = await db.query<JobRow>(
        `SELECT ${PUBLIC_COLUMNS} FROM jobs WHERE tenant_id = $1 AND project_id = $2 ${statusFilter}
         ORDER BY created_at DESC, id DESC LIMIT $3`,
        params,
        'jobs.list',
      );
      return res.rows.map(rowToJob);
    },

    async requeueStale(staleBefore, at, maxAttempts) {
      const res = await db.query<{ id: string; operation: string; status: JobStatus }>(
        `UPDATE jobs SET
           status = CASE WHEN attempts >= $3 THEN 'failed' ELSE 'pending' END,
           error = CASE WHEN attempts >= $3
             THEN 'interrupted ' || attempts || ' times (its worker stopped without finishing it)' ELSE error END,
           completed_at = CASE WHEN attempts >= $3 THEN $2::timestamptz ELSE NULL END,
           started_at = CASE WHEN attempts >= $3 THEN started_at ELSE NULL END,
           heartbeat_at = NULL, locked_by = NULL
         WHERE status = 'running' AND (heartbeat_at IS NULL OR (heartbeat_at < $1
           -- and older than the owner's own stale window, carried in its worker id (core/job-lease.ts)
           AND heartbeat_at < $2::timestamptz - make_interval(secs => COALESCE(substring(locked_by from '~([0-9]+)$')::bigint, 0) / 1000.0)))
         RETURNING id, operation, status`,
        [staleBefore, at, maxAttempts],
        'jobs.requeue_stale',
      );
      const outcome: StaleOutcome = { requeued: [], failed: [] };
      for (const r of res.rows) (r.status === 'failed' ? outcome.failed : outcome.requeued).push({ job_id: r.id, operation: r.operation });
      return outcome;
    },

    async releaseLostClaims(workerId, known) {
      const res = await db.query<{ id: string; operation: string }>(
        `UPDATE jobs SET status = 'pending', attempts = GREATEST(attempts - 1, 0), started_at = NULL, heartbeat_at = NULL, locked_by = NULL
         WHERE status = 'running' AND locked_by = $1 AND NOT (id = ANY($2::text[]))
         RETURNING id, operation`,
        [workerId, known],
        'jobs.release_lost_claims',
      );
      return res.rows.map((r) => ({ job_id: r.id, operation: r.operation }));
    },

    async purgeFinished(before) {
      const res = await db.query(
        `DELETE FROM jobs WHERE status IN ('completed', 'failed', 'cancelled') AND completed_at < $1`,
        [before],
        'jobs.purge',
      );
      return res.rowCount ?? 0;
    },

    async deleteScope(scope) {
      const res = await db.query('DELETE FROM jobs WHERE tenant_id = $1 AND project_id = $2', [scope.tenant_id, scope.project_id], 'jobs.delete_scope');
      return res.rowCount ?? 0;
    },

    subscribe(fn) {
      return listener ? listener.add(fn) : () => undefined;
    },

    async close() {
      await listener?.close();
    },
  };
}
