import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../../src/services/deps.js';
import { basicHealth, deepHealth } from '../../src/services/health.js';
import { authed } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';
import type { VersionInfo } from '../version.js';

/** /v1/version (no auth), /v1/health and /v1/health/deep (both stay up in maintenance). */
export function healthRoutes(app: FastifyInstance, deps: ServiceDeps, meta: { version: VersionInfo; startedAt: Date }): void {
  defineRoute(app, routes.version, {
    public: true, rateClass: 'exempt', tag: 'health', summary: 'Build information (no authentication).',
    handler: () => meta.version,
  });

  defineRoute(app, routes.health, {
    permission: 'health', rateClass: 'exempt', tag: 'health', summary: 'Basic health: storage kind and the scope\'s pattern count; `degraded` when the embedding model cannot load.',
    handler: (_input, request) => basicHealth(deps, authed(request).scope),
  });

  defineRoute(app, routes.healthDeep, {
    permission: 'health', rateClass: 'exempt', errors: [503], sameShapeErrors: [503],
    tag: 'health', summary: 'Deep health: probes storage, embedder and LLM with latencies; 503 when storage fails.',
    handler: async (_input, request, reply) => {
      const health = await deepHealth(deps, { version: meta.version.app_version, startedAt: meta.startedAt }, authed(request).scope);
      reply.status(health.status === 'error' ? 503 : 200);
      return health;
    },
  });
}
