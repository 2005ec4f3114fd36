import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../src/ports/metrics.js';

/**
 * service_requests_total and service_request_duration_seconds, labelled with the ROUTE
 * pattern (`/v1/patterns/:key`), never the raw URL: raw URLs would give every pattern key and
 * every scanner's probe a time series of its own.
 */
export function installRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    const path = request.routeOptions.url ?? 'unmatched';
    metrics.request(request.method, path, reply.statusCode, reply.elapsedTime / 1000);
  });
}
