import type { FastifyInstance } from 'fastify';
import { MaintenanceError } from '../../src/core/errors.js';

/** The two endpoints that stay up so operators can watch the service during maintenance. */
const AVAILABLE_IN_MAINTENANCE = new Set(['/v1/health', '/v1/health/deep']);

export function installMaintenance(app: FastifyInstance, enabled: boolean): void {
  if (!enabled) return;
  app.addHook('onRequest', async (request) => {
    if (AVAILABLE_IN_MAINTENANCE.has(request.routeOptions.url ?? '')) return;
    throw new MaintenanceError();
  });
}
