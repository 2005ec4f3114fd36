import type { z } from 'zod';
import { RollupRequest } from '../contracts/analytics.js';
import { DeletionJobInput, RetentionApplyRequest } from '../contracts/governance.js';
import { ComposeRequest, EvaluateRequest, EvolveRequest } from '../contracts/llm.js';
import { AgingRequest, ImportRequest } from '../contracts/memory.js';
import { LlmNotConfiguredError, ValidationError } from '../core/errors.js';
import type { Scope } from '../core/types.js';
import { runAging } from './aging.js';
import { computeAnalyticsRollup } from './analytics.js';
import type { RequestContext } from './audit.js';
import { compose } from './compose.js';
import type { ServiceDeps } from './deps.js';
import { evaluate } from './evaluate.js';
import { evolve } from './evolve.js';
import { decayFeedback } from './feedback.js';
import { applyRetention } from './governance-retention.js';
import { deleteTarget } from './governance-delete.js';
import { importRecords } from './import-export.js';

/**
 * The operations a job can run (docs/behavior.md "Asynchronous execution"). Each calls the SAME service
 * function as its synchronous route, with the input that route validated, so a job's result
 * is exactly the synchronous response body.
 */
export interface JobOperation {
  /** Refuses up front what would certainly fail (no LLM → 501), before anything is queued. */
  precheck?(deps: ServiceDeps): void;
  run(deps: ServiceDeps, scope: Scope, input: unknown, ctx: RequestContext, job: { job_id: string }): Promise<unknown>;
}

/**
 * The stored input is re-read with the route's own contract: it was valid when queued, and
 * this keeps a job queued by an older version from reaching a service with the wrong shape.
 */
function read<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ValidationError(`stored job input is no longer valid: ${issue.path.join('.') || 'input'}: ${issue.message}`);
}

const needsLlm = (deps: ServiceDeps) => {
  if (!deps.llm) throw new LlmNotConfiguredError();
};

export const JOB_OPERATIONS = {
  evaluate: { precheck: needsLlm, run: (deps, scope, input) => evaluate(deps, scope, read(EvaluateRequest, input)) },
  compose: { precheck: needsLlm, run: (deps, scope, input) => compose(deps, scope, read(ComposeRequest, input)) },
  evolve: { precheck: needsLlm, run: (deps, scope, input) => evolve(deps, scope, read(EvolveRequest, input)) },
  aging: { run: (deps, scope, input) => runAging(deps, scope, read(AgingRequest, input)) },
  feedback_decay: { run: (deps, scope) => decayFeedback(deps, scope) },
  // Keyless records get ids derived from the job, so a re-run skips what the first run stored.
  import: { run: (deps, scope, input, ctx, job) => importRecords(deps, scope, read(ImportRequest, input), ctx, importKeys(job.job_id)) },
  analytics_rollup: { run: (deps, scope, input) => computeAnalyticsRollup(deps, scope, read(RollupRequest, input)) },
  retention_apply: { run: (deps, scope, input, ctx) => applyRetention(deps, scope, read(RetentionApplyRequest, input), ctx) },
  // Authorised when queued; the target is in the stored input, the caller's scope is the job's.
  governance_delete: {
    run: (deps, scope, input, ctx) => {
      const { tenant_id, project_id, dry_run, kind } = read(DeletionJobInput, input);
      return deleteTarget(deps, { tenant_id, project_id }, { dry_run, kind, caller_scope: scope }, ctx);
    },
  },
} satisfies Record<string, JobOperation>;

/** Ids derived from the job's id when it is path-safe (newId's alphabet), else fresh ones. */
function importKeys(jobId: string): { keyPrefix?: string } {
  return /^[0-9a-z]{1,40}$/.test(jobId) ? { keyPrefix: jobId } : {};
}

export type JobOperationName = keyof typeof JOB_OPERATIONS;

export function jobOperation(name: string): JobOperation | null {
  return Object.hasOwn(JOB_OPERATIONS, name) ? JOB_OPERATIONS[name as JobOperationName] : null;
}
