import type { FastifyInstance } from 'fastify';
import { EventsQuery, EventsResponse, RollupParams, RollupRequest, RollupResponse } from '../../src/contracts/analytics.js';
import { computeAnalyticsRollup, getAnalyticsRollup, listAnalyticsEvents } from '../../src/services/analytics.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { authed } from '../context.js';
import { defineRoute } from '../define-route.js';
import { runOrQueue } from '../async.js';

/** docs/behavior.md "Analytics": compute and read ROI rollups, list raw ROI events. */
export function analyticsRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, {
    method: 'POST', url: '/v1/analytics/rollup', permission: 'analytics:rollup', body: RollupRequest, response: RollupResponse, async: true,
    tag: 'analytics', summary: 'Compute the ROI rollup of a window.',
    handler: runOrQueue(deps, 'analytics_rollup', computeAnalyticsRollup),
  });

  defineRoute(app, {
    method: 'GET', url: '/v1/analytics/rollup/:window', permission: 'analytics:read', params: RollupParams, response: RollupResponse, errors: [404],
    tag: 'analytics', summary: 'The last computed rollup of a window.',
    handler: ({ params }, request) => getAnalyticsRollup(deps, authed(request).scope, params.window),
  });

  defineRoute(app, {
    method: 'GET', url: '/v1/analytics/events', permission: 'analytics:read', query: EventsQuery, response: EventsResponse,
    tag: 'analytics', summary: 'Raw ROI events (metadata only, no task content).',
    handler: ({ query }, request) => listAnalyticsEvents(deps, authed(request).scope, query),
  });
}
