import { Readable } from 'node:stream';
import { z } from 'zod';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ClassifyParams, ClassifyRequest, DeleteProjectParams, DeleteScopeQuery, DeleteTenantParams, DeletionQuery, NdjsonExportQuery,
  type DeletionJobInput, type DeletionKind,
} from '../../src/contracts/governance.js';
import { projectTarget, tenantTarget, type DeletionTarget } from '../../src/core/governance.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { classifyPattern, exportNdjson, parseExportClassifications } from '../../src/services/governance.js';
import { authorizeDeletion, deleteTarget, warnAboutOwnKey } from '../../src/services/governance-delete.js';
import { acceptAsync, wantsAsync } from '../async.js';
import { authed, requestContext } from '../context.js';
import { parseWith } from '../http.js';

const DeleteScopeBody = z.object({ dry_run: z.boolean().optional() }).strict().optional();

/**
 * docs/behavior.md "Governance" beyond retention: the NDJSON export, classification and the three
 * deletions (project, tenant, the caller's own scope). Deletions accept `Prefer: respond-async`.
 */
export function governanceDataRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  app.get('/v1/governance/export', { config: { permission: 'export' } }, async (request, reply) => {
    const query = parseWith(NdjsonExportQuery, request.query, 'query');
    const classifications = parseExportClassifications(query.classification);
    const { scope } = authed(request);
    // The GDPR export is a paid feature when billing is on (pro and up).
    await deps.billing?.requireFeature(scope.tenant_id, 'governance_export');
    const day = deps.clock.now().toISOString().slice(0, 10);
    reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="export-${scope.tenant_id}-${scope.project_id}-${day}.ndjson"`);
    // Readable.from pulls the next page only when the socket drained the previous lines.
    return reply.send(Readable.from(exportNdjson(deps, scope, classifications, requestContext(request))));
  });

  app.put('/v1/governance/patterns/:key/classify', { config: { permission: 'governance:write' } }, async (request) => {
    const { key } = parseWith(ClassifyParams, request.params, 'path');
    const { classification } = parseWith(ClassifyRequest, request.body);
    return classifyPattern(deps, authed(request).scope, key, classification, requestContext(request));
  });

  app.delete('/v1/governance/projects/:project_id', { config: { permission: 'governance:delete' } }, async (request, reply) => {
    const { project_id } = parseWith(DeleteProjectParams, request.params, 'path');
    const { dry_run } = parseWith(DeletionQuery, request.query, 'query');
    return runDeletion(request, reply, projectTarget(authed(request).principal.tenant_id, project_id), 'project', dry_run);
  });

  app.delete('/v1/governance/tenants/:tenant_id', { config: { permission: 'tenants:delete' } }, async (request, reply) => {
    const { tenant_id } = parseWith(DeleteTenantParams, request.params, 'path');
    const { dry_run } = parseWith(DeletionQuery, request.query, 'query');
    return runDeletion(request, reply, tenantTarget(tenant_id), 'tenant', dry_run);
  });

  // The caller's own scope; dry_run comes in the query string (the spec's place) or, since a
  // client may well put it there, in the body. Any other body is refused rather than ignored:
  // a misspelt `{"dryrun": true}` must not turn into a real deletion.
  app.post('/v1/governance/delete-scope', { config: { permission: 'governance:delete' } }, async (request, reply) => {
    const { dry_run } = parseWith(DeleteScopeQuery, request.query, 'query');
    const body = parseWith(DeleteScopeBody, request.body ?? undefined);
    const { scope } = authed(request);
    return runDeletion(request, reply, projectTarget(scope.tenant_id, scope.project_id), 'scope', dry_run || body?.dry_run === true);
  });

  /** Authorises, then deletes now or queues the deletion (Prefer: respond-async). */
  async function runDeletion(request: FastifyRequest, reply: FastifyReply, target: DeletionTarget, kind: DeletionKind, dryRun: boolean) {
    const { principal, scope } = authed(request);
    authorizeDeletion({ tenant_id: principal.tenant_id, project_id: principal.project_id, role: principal.role }, target);
    if (wantsAsync(request)) {
      const input: DeletionJobInput = { tenant_id: target.tenant_id, project_id: target.project_id, dry_run: dryRun, kind };
      return acceptAsync(request, reply, deps, 'governance_delete', input);
    }
    const result = await deleteTarget(deps, target, { dry_run: dryRun, kind, caller_scope: scope }, requestContext(request));
    return warnAboutOwnKey(result, principal, target);
  }
}
