import type { FastifyRequest } from 'fastify';
import type { Permission } from '../src/core/permissions.js';
import type { RateDecision } from '../src/core/rate-window.js';
import type { Role, Scope } from '../src/core/types.js';
import type { RequestContext } from '../src/services/audit.js';

/** Who made a request, as decided by the authenticator of the configured auth mode. */
export interface Principal {
  /** Which authenticator accepted the request. */
  kind: 'env' | 'dev' | 'db' | 'oidc';
  /** For audit events: key id, 'env', 'dev', an OIDC subject; never a secret. */
  actor: string;
  role: Role;
  tenant_id: string;
  /** A key bound to one project (db, oidc); null lets X-Project-Id choose (env, dev). */
  project_id: string | null;
  /** Identity of the key for the per-key rate limit (a hash, never the key); null: none. */
  rateKey: string | null;
  /** The key's pattern quota, when it has one. */
  max_patterns: number | null;
  /** When the credential expires (db keys); absent or null: it does not. Keys it creates never outlive it. */
  expires_at?: string | null;
}

/** Rate-limit bucket of a route: expensive = the LLM endpoints; exempt = health, version, /metrics. */
export type RateClass = 'standard' | 'expensive' | 'exempt';

declare module 'fastify' {
  /**
   * Every route declares what it needs in its options' `config`:
   * `{permission: 'learn'}` (an API key whose role holds it), or `{public: true}` (no key:
   * /v1/version, /metrics with its own token). A route with neither is refused (fail closed).
   */
  interface FastifyContextConfig {
    permission?: Permission;
    public?: boolean;
    rateClass?: RateClass;
  }
  interface FastifyRequest {
    /** Set by the auth hook on every non-public route. */
    principal: Principal | null;
    /** The caller's tenant and project; set with the principal. */
    scope: Scope | null;
    /** The tightest rate-limit decision of the request (its RateLimit-* headers); null on exempt routes. */
    rateLimit: RateDecision | null;
  }
}

/** The principal and scope of an authenticated route (set by the auth hook; a bug if missing). */
export function authed(request: FastifyRequest): { principal: Principal; scope: Scope } {
  if (!request.principal || !request.scope) throw new Error(`route ${request.routeOptions.url} ran without authentication`);
  return { principal: request.principal, scope: request.scope };
}

/** Audit context of a request, passed to services. */
export function requestContext(request: FastifyRequest): RequestContext {
  return {
    actor: request.principal?.actor ?? null,
    request_id: request.id,
    ip: request.ip,
    max_patterns: request.principal?.max_patterns ?? null,
  };
}
