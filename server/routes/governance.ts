import type { FastifyInstance } from 'fastify';
import { RetentionUpdateRequest } from '../../src/contracts/governance.js';
import { ForbiddenError } from '../../src/core/errors.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { applyRetention, getRetentionPolicy, updateRetentionPolicy } from '../../src/services/governance-retention.js';
import { authed, requestContext } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';
import { parseWith } from '../http.js';
import { runOrQueue } from '../async.js';

/** docs/behavior.md "Governance": the retention policy (read, set) and applying it. */
export function governanceRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, routes.getRetention, {
    permission: 'governance:read', tag: 'governance', summary: 'The retention policy in force and where it comes from.',
    handler: (_input, request) => getRetentionPolicy(deps, authed(request).scope),
  });

  // The spec reserves this for DB auth: only there is a project a record owned by a tenant
  // whose keys are bound to it. With env or dev auth any caller may name any project through
  // X-Project-Id, so a project-wide deletion policy is not theirs to set.
  defineRoute(app, routes.setRetention, {
    permission: 'governance:write', input: 'manual',
    tag: 'governance', summary: 'Set the project\'s retention days (DB auth), or null to inherit.',
    handler: (_input, request) => {
      const { principal, scope } = authed(request);
      if (principal.kind !== 'db') {
        throw new ForbiddenError(
          `setting the retention policy needs DB auth mode (SERVICE_AUTH_MODE=db, or auto with SERVICE_DATABASE_URL); this request used ${principal.kind} auth`,
        );
      }
      // Parsed after the auth-mode check: outside DB auth the answer is 403 whatever the body.
      const input = parseWith(RetentionUpdateRequest, request.body);
      return updateRetentionPolicy(deps, scope, input, requestContext(request));
    },
  });

  // No body (or `{}`) means a real run: dry_run defaults to false.
  defineRoute(app, routes.applyRetention, {
    permission: 'governance:admin', bodyOptional: true,
    async: true,
    tag: 'governance', summary: 'Delete patterns past their retention (or count them with dry_run).',
    handler: runOrQueue(deps, 'retention_apply', applyRetention),
  });
}
