import type { FastifyInstance } from 'fastify';
import { RetentionApplyRequest, RetentionUpdateRequest } from '../../src/contracts/governance.js';
import { ForbiddenError } from '../../src/core/errors.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { applyRetention, getRetentionPolicy, updateRetentionPolicy } from '../../src/services/governance-retention.js';
import { authed, requestContext } from '../context.js';
import { parseWith } from '../http.js';
import { acceptAsync, wantsAsync } from '../async.js';

/** docs/behavior.md "Governance": the retention policy (read, set) and applying it. */
export function governanceRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  app.get('/v1/governance/retention', { config: { permission: 'governance:read' } }, async (request) => {
    return getRetentionPolicy(deps, authed(request).scope);
  });

  // The spec reserves this for DB auth: only there is a project a record owned by a tenant
  // whose keys are bound to it. With env or dev auth any caller may name any project through
  // X-Project-Id, so a project-wide deletion policy is not theirs to set.
  app.put('/v1/governance/retention', { config: { permission: 'governance:write' } }, async (request) => {
    const { principal, scope } = authed(request);
    if (principal.kind !== 'db') {
      throw new ForbiddenError(
        `setting the retention policy needs DB auth mode (SERVICE_AUTH_MODE=db, or auto with SERVICE_DATABASE_URL); this request used ${principal.kind} auth`,
      );
    }
    const input = parseWith(RetentionUpdateRequest, request.body);
    return updateRetentionPolicy(deps, scope, input, requestContext(request));
  });

  app.post('/v1/governance/retention/apply', { config: { permission: 'governance:admin' } }, async (request, reply) => {
    // No body (or `{}`) means a real run: dry_run defaults to false.
    const input = parseWith(RetentionApplyRequest, request.body ?? {});
    if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'retention_apply', input);
    return applyRetention(deps, authed(request).scope, input, requestContext(request));
  });
}
