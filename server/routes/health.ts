import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../../src/services/deps.js';
import { basicHealth, deepHealth, readiness } from '../../src/services/health.js';
import { authed } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';
import type { VersionInfo } from '../version.js';

/** The probes for orchestrators (Dockerfile HEALTHCHECK, compose): outside /v1 like /metrics. */
export const LIVENESS_PATH = routes.liveness.path;
export const READINESS_PATH = routes.readiness.path;

/**
 * /v1/version (no auth), /v1/health and /v1/health/deep (both stay up in maintenance), and the
 * probes /livez and /readyz: no key, no rate limit, no audit event, up in maintenance too.
 */
export function healthRoutes(app: FastifyInstance, deps: ServiceDeps, meta: { version: VersionInfo; startedAt: Date }): void {
  defineRoute(app, routes.version, {
    public: true, rateClass: 'exempt', tag: 'health', summary: 'Build information (no authentication).',
    handler: () => meta.version,
  });

  defineRoute(app, routes.liveness, {
    public: true, rateClass: 'exempt',
    tag: 'health', summary: '(+) Liveness probe (no authentication): 200 `{status: "up"}` while the process answers.',
    handler: () => ({ status: 'up' as const }),
  });

  defineRoute(app, routes.readiness, {
    public: true, rateClass: 'exempt', errors: [503], sameShapeErrors: [503],
    tag: 'health', summary: '(+) Readiness probe (no authentication): 200 `ready` when storage answers a query, else 503 `not_ready`.',
    handler: async (_input, _request, reply) => {
      const ready = await readiness(deps);
      reply.status(ready.status === 'ready' ? 200 : 503);
      return ready;
    },
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
