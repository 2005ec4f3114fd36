import { ConflictError, NotFoundError } from '../core/errors.js';
import type { JobAccepted, JobListInput, JobListResponse, JobRecord } from '../contracts/jobs.js';
import type { Scope } from '../core/types.js';
import type { JobRepository } from '../ports/jobs.js';
import type { RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import { newId } from './ids.js';
import { JOB_OPERATIONS, type JobOperationName } from './job-operations.js';

/**
 * Jobs API use cases (docs/behavior.md "Jobs"): submit, read, list, cancel. The worker that runs
 * them is job-runner.ts.
 */

/** What a job stores: the validated input and who asked (audit events of the run name them). */
export interface JobPayload {
  input: unknown;
  ctx: RequestContext;
}

// Ids we mint are 18 lower-case base-36 characters; anything else cannot name a job.
const JOB_ID = /^[0-9a-z]{1,64}$/;

export function isJobId(id: string): boolean {
  return JOB_ID.test(id);
}

/** The storage's queue (every storage has one). */
export function jobQueue(deps: Pick<ServiceDeps, 'storage'>): JobRepository {
  return deps.storage.jobs;
}

/**
 * Queues `operation` with an input its route has already validated. Refuses up front what
 * could only fail later (no LLM → 501), so the caller hears it now rather than by polling.
 */
export async function submitJob(
  deps: ServiceDeps,
  scope: Scope,
  operation: JobOperationName,
  input: unknown,
  ctx: RequestContext,
): Promise<JobAccepted> {
  const definition = JOB_OPERATIONS[operation];
  if ('precheck' in definition) definition.precheck(deps);
  const payload: JobPayload = { input: input ?? null, ctx: { actor: ctx.actor, request_id: ctx.request_id, ip: ctx.ip, max_patterns: ctx.max_patterns ?? null } };
  const job = await jobQueue(deps).enqueue(scope, {
    job_id: newId(deps.clock.now()),
    operation,
    payload,
    created_at: deps.clock.now().toISOString(),
  });
  deps.instruments.jobSubmitted(operation);
  deps.logger.info({ ...scope, job_id: job.job_id, operation }, 'job submitted');
  return { job_id: job.job_id, status: 'pending' };
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`job ${id} not found`);
}

/** GET /v1/jobs/{id}: 404 for unknown ids and for jobs of another scope alike. */
export async function getJob(deps: ServiceDeps, scope: Scope, id: string): Promise<JobRecord> {
  const job = isJobId(id) ? await jobQueue(deps).get(scope, id) : null;
  if (!job) throw notFound(id);
  return job;
}

/** GET /v1/jobs: newest first. */
export async function listJobs(
  deps: ServiceDeps,
  scope: Scope,
  input: JobListInput,
): Promise<JobListResponse> {
  const jobs = await jobQueue(deps).list(scope, input);
  return { jobs, count: jobs.length };
}

/** POST /v1/jobs/{id}/cancel: pending → cancelled; running or finished → 409. */
export async function cancelJob(deps: ServiceDeps, scope: Scope, id: string): Promise<JobRecord> {
  const outcome = isJobId(id) ? await jobQueue(deps).cancel(scope, id, deps.clock.now().toISOString()) : null;
  if (!outcome) throw notFound(id);
  if (!outcome.cancelled) {
    throw new ConflictError(`job ${id} is ${outcome.job.status}; only pending jobs can be cancelled`);
  }
  deps.instruments.jobCompleted(outcome.job.operation, 'cancelled');
  deps.logger.info({ ...scope, job_id: id, operation: outcome.job.operation }, 'job cancelled');
  return outcome.job;
}
