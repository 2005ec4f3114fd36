import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type DeletionJobInput, type DeletionKind } from '../../src/contracts/governance.js';
import { projectTarget, tenantTarget, type DeletionTarget } from '../../src/core/governance.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { classifyPattern, exportNdjson, parseExportClassifications } from '../../src/services/governance.js';
import { authorizeDeletion, deleteTarget, warnAboutOwnKey } from '../../src/services/governance-delete.js';
import { acceptAsync, wantsAsync } from '../async.js';
import { authed, requestContext } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';
import { sendNdjsonExport } from '../ndjson-export.js';

/**
 * docs/behavior.md "Governance" beyond retention: the NDJSON export, classification and the three
 * deletions (project, tenant, the caller's own scope). Deletions accept `Prefer: respond-async`.
 */
export function governanceDataRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, routes.governanceExport, {
    permission: 'export', tag: 'governance', summary: 'Stream every pattern of the scope as NDJSON (one export record plus tenant_id and project_id per line).',
    handler: async ({ query }, request, reply) => {
      const classifications = parseExportClassifications(query.classification);
      const { scope } = authed(request);
      // The GDPR export is a paid feature when billing is on (pro and up).
      await deps.billing?.requireFeature(scope.tenant_id, 'governance_export');
      return sendNdjsonExport(deps, reply, scope, exportNdjson(deps, scope, classifications && { classifications }, requestContext(request), { withOutcomes: true, withEvaluationRuns: true }));
    },
  });

  defineRoute(app, routes.classify, {
    permission: 'governance:write', errors: [404],
    tag: 'governance', summary: 'Reclassify a pattern; recall and export filters see it at once.',
    handler: ({ params, body }, request) => classifyPattern(deps, authed(request).scope, params.key, body.classification, requestContext(request)),
  });

  defineRoute(app, routes.deleteProject, {
    permission: 'governance:delete', async: true, errors: [404],
    tag: 'governance', summary: 'Delete a project of the caller\'s tenant with everything in it (irreversible), or count it with dry_run=true.',
    handler: ({ params, query }, request, reply) =>
      runDeletion(request, reply, projectTarget(authed(request).principal.tenant_id, params.project_id), 'project', query.dry_run),
  });

  defineRoute(app, routes.deleteTenant, {
    permission: 'tenants:delete', async: true, errors: [404],
    tag: 'governance', summary: 'Delete the caller\'s own tenant with all its projects (owner only, irreversible), or count it with dry_run=true.',
    handler: ({ params, query }, request, reply) => runDeletion(request, reply, tenantTarget(params.tenant_id), 'tenant', query.dry_run),
  });

  // The caller's own scope; dry_run comes in the query string (the spec's place) or, since a
  // client may well put it there, in the body. Any other body is refused rather than ignored:
  // a misspelt `{"dryrun": true}` must not turn into a real deletion.
  defineRoute(app, routes.deleteScope, {
    permission: 'governance:delete', bodyOptional: true, async: true,
    tag: 'governance', summary: 'Delete everything in the caller\'s scope, or count it with dry_run=true.',
    handler: ({ query, body }, request, reply) => {
      const { scope } = authed(request);
      return runDeletion(request, reply, projectTarget(scope.tenant_id, scope.project_id), 'scope', query.dry_run || body.dry_run === true);
    },
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
