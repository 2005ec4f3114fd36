import type { FastifyInstance } from 'fastify';
import { MaintenanceError } from '../../src/core/errors.js';
import { LIVENESS_PATH, READINESS_PATH } from '../routes/health.js';

/**
 * The two health endpoints stay up so operators can watch the service during maintenance, and
 * the probes too: maintenance is a chosen state, not a fault an orchestrator should restart.
 */
const AVAILABLE_IN_MAINTENANCE = new Set(['/v1/health', '/v1/health/deep', LIVENESS_PATH, READINESS_PATH]);

export function installMaintenance(app: FastifyInstance, enabled: boolean): void {
  if (!enabled) return;
  app.addHook('onRequest', async (request) => {
    if (AVAILABLE_IN_MAINTENANCE.has(request.routeOptions.url ?? '')) return;
    throw new MaintenanceError();
  });
}
