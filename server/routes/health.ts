import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../../src/services/deps.js';
import { basicHealth, deepHealth } from '../../src/services/health.js';
import { authed } from '../context.js';
import type { VersionInfo } from '../version.js';

/** /v1/version (no auth), /v1/health and /v1/health/deep (both stay up in maintenance). */
export function healthRoutes(app: FastifyInstance, deps: ServiceDeps, meta: { version: VersionInfo; startedAt: Date }): void {
  app.get('/v1/version', { config: { public: true, rateClass: 'exempt' } }, async () => meta.version);

  app.get('/v1/health', { config: { permission: 'health', rateClass: 'exempt' } }, async (request) => {
    return basicHealth(deps, authed(request).scope);
  });

  app.get('/v1/health/deep', { config: { permission: 'health', rateClass: 'exempt' } }, async (request, reply) => {
    const health = await deepHealth(deps, { version: meta.version.app_version, startedAt: meta.startedAt }, authed(request).scope);
    return reply.status(health.status === 'error' ? 503 : 200).send(health);
  });
}
