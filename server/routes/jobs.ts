import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../../src/services/deps.js';
import { cancelJob, getJob, listJobs } from '../../src/services/jobs.js';
import { authed } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';

/** docs/behavior.md "Jobs": list, read and cancel the caller's jobs (other scopes' jobs are 404). */
export function jobRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, routes.listJobs, {
    permission: 'jobs:list', tag: 'jobs', summary: 'The scope\'s background jobs, newest first.',
    handler: ({ query }, request) => listJobs(deps, authed(request).scope, query),
  });

  defineRoute(app, routes.getJob, {
    permission: 'jobs:read', errors: [404],
    tag: 'jobs', summary: 'One job with its status and result.',
    handler: ({ params }, request) => getJob(deps, authed(request).scope, params.id),
  });

  defineRoute(app, routes.cancelJob, {
    permission: 'jobs:cancel', errors: [404, 409],
    tag: 'jobs', summary: 'Cancel a pending job.',
    handler: ({ params }, request) => cancelJob(deps, authed(request).scope, params.id),
  });
}
