import type { FastifyInstance } from 'fastify';
import { ImportRequest } from '../../src/contracts/memory.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { exportRecords, importRecords } from '../../src/services/transfer.js';
import { authed, requestContext } from '../context.js';
import { parseWith } from '../http.js';
import { acceptAsync, wantsAsync } from '../async.js';

/** GET /v1/export and POST /v1/import (the JSON form; NDJSON export lives with governance). */
export function transferRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  app.get('/v1/export', { config: { permission: 'export' } }, async (request) => {
    await deps.billing?.requireFeature(authed(request).scope.tenant_id, 'governance_export');
    return exportRecords(deps, authed(request).scope, requestContext(request));
  });

  app.post('/v1/import', { config: { permission: 'import' } }, async (request, reply) => {
    const input = parseWith(ImportRequest, request.body);
    if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'import', input);
    return importRecords(deps, authed(request).scope, input, requestContext(request));
  });
}
