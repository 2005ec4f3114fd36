import type { FastifyInstance } from 'fastify';
import { JobListQuery, JobParams } from '../../src/contracts/jobs.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { cancelJob, getJob, listJobs } from '../../src/services/jobs.js';
import { authed } from '../context.js';
import { parseWith } from '../http.js';

/** docs/behavior.md "Jobs": list, read and cancel the caller's jobs (other scopes' jobs are 404). */
export function jobRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  app.get('/v1/jobs', { config: { permission: 'jobs:list' } }, async (request) => {
    const input = parseWith(JobListQuery, request.query, 'query');
    return listJobs(deps, authed(request).scope, input);
  });

  app.get('/v1/jobs/:id', { config: { permission: 'jobs:read' } }, async (request) => {
    const { id } = parseWith(JobParams, request.params, 'path');
    return getJob(deps, authed(request).scope, id);
  });

  app.post('/v1/jobs/:id/cancel', { config: { permission: 'jobs:cancel' } }, async (request) => {
    const { id } = parseWith(JobParams, request.params, 'path');
    return cancelJob(deps, authed(request).scope, id);
  });
}
