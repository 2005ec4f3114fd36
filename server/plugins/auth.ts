import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthenticatedError, ValidationError } from '../../src/core/errors.js';
import { hasPermission } from '../../src/core/permissions.js';
import type { Scope } from '../../src/core/types.js';
import { ID, ID_RULE } from '../../src/core/vocabulary.js';
import { AuditKind, writeAudit } from '../../src/services/audit.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import type { Authenticator } from '../auth/authenticator.js';
import { requestContext, type Principal } from '../context.js';

const DEFAULT_PROJECT = 'default';

/**
 * Authentication → scope → permission, on every route that is not public. Routes declare
 * `config.permission`; a route declaring neither a permission nor `public` is refused, so a
 * forgotten declaration fails closed. `afterAuth` runs once the principal is known (the
 * per-key rate limit).
 */
export function installAuth(
  app: FastifyInstance,
  deps: ServiceDeps,
  authenticator: Authenticator,
  afterAuth: (request: FastifyRequest) => Promise<void>,
): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('scope', null);

  app.addHook('onRequest', async (request) => {
    const url = request.routeOptions.url;
    const config = request.routeOptions.config;
    // Unknown routes answer 404 (the not-found handler); CORS preflights were answered by @fastify/cors.
    if (url === undefined || request.is404 || request.method === 'OPTIONS') return;
    if (config?.public) return;
    const permission = config?.permission;
    if (!permission) throw new Error(`route ${request.method} ${url} declares neither a permission nor public`);

    let principal: Principal;
    try {
      principal = await authenticator.authenticate({ authorization: request.headers.authorization });
    } catch (err) {
      if (err instanceof UnauthenticatedError) {
        await writeAudit(deps, AuditKind.authFailed, null, requestContext(request), { reason: err.message, path: url, method: request.method });
      }
      throw err;
    }
    request.principal = principal;
    request.scope = resolveScope(principal, request.headers['x-project-id']);

    if (!hasPermission(principal.role, permission)) {
      throw new ForbiddenError(`the "${permission}" permission is required; this API key's role is ${principal.role}`);
    }
    await afterAuth(request);
  });
}

/**
 * env/dev: tenant from the principal, project from X-Project-Id (default `default`).
 * A key bound to a project (db, oidc) may not name another one.
 */
export function resolveScope(principal: Principal, header: string | string[] | undefined): Scope {
  const requested = Array.isArray(header) ? header[0] : header;
  if (requested !== undefined && !ID.test(requested)) {
    throw new ValidationError('invalid X-Project-Id header', [
      { path: 'X-Project-Id', message: `project ids are ${ID_RULE}` },
    ]);
  }
  if (principal.project_id !== null) {
    if (requested !== undefined && requested !== principal.project_id) {
      throw new ForbiddenError(`this API key is bound to project ${principal.project_id}`);
    }
    return { tenant_id: principal.tenant_id, project_id: principal.project_id };
  }
  return { tenant_id: principal.tenant_id, project_id: requested ?? DEFAULT_PROJECT };
}
