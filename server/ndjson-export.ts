import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Scope } from '../src/core/types.js';
import type { ServiceDeps } from '../src/services/deps.js';

/**
 * Sends an NDJSON export as an attachment named after the scope and the day. Readable.from
 * pulls the next page only when the socket drained the previous lines, so memory stays flat.
 */
export function sendNdjsonExport(deps: ServiceDeps, reply: FastifyReply, scope: Scope, lines: AsyncIterable<string>): FastifyReply {
  const day = deps.clock.now().toISOString().slice(0, 10);
  return reply
    .header('content-type', 'application/x-ndjson; charset=utf-8')
    .header('content-disposition', `attachment; filename="export-${scope.tenant_id}-${scope.project_id}-${day}.ndjson"`)
    .send(Readable.from(lines));
}
