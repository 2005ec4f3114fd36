import type { FastifyInstance } from 'fastify';
import { EventsQuery, RollupParams, RollupRequest } from '../../src/contracts/analytics.js';
import { computeAnalyticsRollup, getAnalyticsRollup, listAnalyticsEvents } from '../../src/services/analytics.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { authed } from '../context.js';
import { parseWith } from '../http.js';
import { acceptAsync, wantsAsync } from '../async.js';

/** docs/behavior.md "Analytics": compute and read ROI rollups, list raw ROI events. */
export function analyticsRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  app.post('/v1/analytics/rollup', { config: { permission: 'analytics:rollup' } }, async (request, reply) => {
    const input = parseWith(RollupRequest, request.body);
    if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'analytics_rollup', input);
    return computeAnalyticsRollup(deps, authed(request).scope, input);
  });

  app.get('/v1/analytics/rollup/:window', { config: { permission: 'analytics:read' } }, async (request) => {
    const { window } = parseWith(RollupParams, request.params, 'path');
    return getAnalyticsRollup(deps, authed(request).scope, window);
  });

  app.get('/v1/analytics/events', { config: { permission: 'analytics:read' } }, async (request) => {
    const input = parseWith(EventsQuery, request.query, 'query');
    return listAnalyticsEvents(deps, authed(request).scope, input);
  });
}
