import type { FastifyInstance } from 'fastify';
import { computeAnalyticsRollup, getAnalyticsRollup, listAnalyticsEvents } from '../../src/services/analytics.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { authed } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';
import { runOrQueue } from '../async.js';

/** docs/behavior.md "Analytics": compute and read ROI rollups, list raw ROI events. */
export function analyticsRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, routes.computeRollup, {
    permission: 'analytics:rollup', async: true,
    tag: 'analytics', summary: 'Compute the ROI rollup of a window.',
    handler: runOrQueue(deps, 'analytics_rollup', computeAnalyticsRollup),
  });

  defineRoute(app, routes.getRollup, {
    permission: 'analytics:read', errors: [404],
    tag: 'analytics', summary: 'The last computed rollup of a window.',
    handler: ({ params }, request) => getAnalyticsRollup(deps, authed(request).scope, params.window),
  });

  defineRoute(app, routes.events, {
    permission: 'analytics:read', tag: 'analytics', summary: 'Raw ROI events (metadata only, no task content).',
    handler: ({ query }, request) => listAnalyticsEvents(deps, authed(request).scope, query),
  });
}
