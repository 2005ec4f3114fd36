import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../src/ports/metrics.js';
import { UnauthenticatedError } from '../../src/core/errors.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { processWideMetrics } from '../../src/services/metrics.js';
import { bearerToken, secretMatches, sha256 } from '../auth/secrets.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';

/**
 * GET /metrics (Prometheus text format), registered only when SERVICE_METRICS=true. It takes
 * SERVICE_METRICS_TOKEN as its Bearer token when one is set, not an API key: scrapers are not
 * tenants. Gauges are refreshed from storage on each scrape.
 */
export function metricsRoutes(app: FastifyInstance, deps: ServiceDeps, metrics: Metrics): void {
  const { enabled, token } = deps.config.observability.metrics;
  if (!enabled) return;
  const tokenDigest = token ? sha256(token) : null;

  defineRoute(app, routes.prometheusMetrics, {
    public: true, rateClass: 'exempt', errors: [404],
    tag: 'health', summary: 'Prometheus text exposition (only with SERVICE_METRICS=true; Bearer SERVICE_METRICS_TOKEN when set).',
    handler: async (_input, request, reply) => {
      if (tokenDigest) {
        const presented = bearerToken(request.headers.authorization);
        if (presented === null || !secretMatches(presented, tokenDigest)) {
          throw new UnauthenticatedError('the metrics endpoint needs Authorization: Bearer <SERVICE_METRICS_TOKEN>');
        }
      }
      metrics.setGauges(await processWideMetrics(deps));
      return reply.type(metrics.contentType).send(await metrics.render());
    },
  });
}
