import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Scope } from '../src/core/types.js';
import type { RequestContext } from '../src/services/audit.js';
import type { ServiceDeps } from '../src/services/deps.js';
import type { JobOperationName } from '../src/services/job-operations.js';
import type { JobAccepted } from '../src/contracts/jobs.js';
import { submitJob } from '../src/services/jobs.js';
import { authed, requestContext } from './context.js';

/**
 * `Prefer: respond-async` (RFC 7240) on the operations docs/behavior.md lists under
 * "Asynchronous execution". A route validates its input first (bad input stays a
 * synchronous 422), then:
 *
 *   if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'compose', input);
 *   return compose(deps, scope, input);
 */
export function wantsAsync(request: FastifyRequest): boolean {
  const raw = request.headers.prefer;
  const values = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  // Preferences are comma-separated; each is a token with optional `=value` and `;params`.
  return values.some((value) =>
    value.split(',').some((pref) => pref.split(';')[0].split('=')[0].trim().toLowerCase() === 'respond-async'),
  );
}

/** Queues the operation with its validated input; answers 202 `{job_id, status}` + Location. */
export async function acceptAsync(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ServiceDeps,
  operation: JobOperationName,
  input: unknown,
): Promise<JobAccepted> {
  await deps.billing?.beforeJob(authed(request).scope, operation);
  const accepted = await submitJob(deps, authed(request).scope, operation, input, requestContext(request));
  reply.code(202).header('location', `/v1/jobs/${accepted.job_id}`).header('preference-applied', 'respond-async');
  return accepted;
}

/**
 * The whole handler of an operation that accepts `Prefer: respond-async`, for routes whose
 * parsed body is the operation's input: queued as a job (202) when asked, else run now.
 *
 *   defineRoute(app, { …, body: EvaluateRequest, async: true, handler: runOrQueue(deps, 'evaluate', evaluate) });
 */
export function runOrQueue<I>(
  deps: ServiceDeps,
  operation: JobOperationName,
  run: (deps: ServiceDeps, scope: Scope, input: I, ctx: RequestContext) => Promise<unknown>,
): (input: { body: I }, request: FastifyRequest, reply: FastifyReply) => Promise<unknown> {
  return async ({ body }, request, reply) => {
    if (wantsAsync(request)) return acceptAsync(request, reply, deps, operation, body);
    return run(deps, authed(request).scope, body, requestContext(request));
  };
}
