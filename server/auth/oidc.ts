import type { JWTPayload } from 'jose';
import type { OidcVerifier } from '../../src/ports/oidc.js';
import type { Config } from '../../src/config/index.js';
import { ForbiddenError, UnauthenticatedError } from '../../src/core/errors.js';
import { roleAtLeast } from '../../src/core/permissions.js';
import { ROLES, type Role } from '../../src/core/types.js';
import { ID, ID_RULE } from '../../src/core/vocabulary.js';
import type { Principal } from '../context.js';
import type { AuthRequest, Authenticator } from './authenticator.js';
import { bearerToken } from './secrets.js';
import type { Clock } from '../../src/ports/clock.js';

/**
 * A claim by name: the exact name first (providers namespace claims as URLs, which contain
 * dots), then as a dotted path into nested objects (`realm_access.role`).
 */
export function claimValue(payload: JWTPayload, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  let current: unknown = payload;
  for (const part of name.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** The role a claim grants: a role name, or the highest role in a list of names; else null. */
export function roleFromClaim(value: unknown): Role | null {
  const names = Array.isArray(value) ? value : [value];
  let best: Role | null = null;
  for (const name of names) {
    if (typeof name !== 'string' || !(ROLES as readonly string[]).includes(name)) continue;
    const role = name as Role;
    if (best === null || roleAtLeast(role, best)) best = role;
  }
  return best;
}

/**
 * OIDC mode: the Bearer token is a JWT from the configured issuer, verified against its JWKS.
 * Role, tenant and project come from configurable claims.
 *
 * A token that fails verification (bad signature, expired, wrong issuer or audience) → 401:
 * we do not know who is calling. A valid token whose role or tenant claim is missing or not
 * usable → 403: the caller is known, but the token grants nothing here. Without a project
 * claim the token is tenant-wide and X-Project-Id chooses the project (default `default`).
 */
export class OidcAuthenticator implements Authenticator {
  readonly mode = 'oidc' as const;

  constructor(
    private readonly settings: Config['auth']['oidc'],
    private readonly verifier: OidcVerifier,
    private readonly clock: Clock,
  ) {}

  get description(): string {
    return `OIDC bearer tokens from ${this.settings.issuer}` + (this.settings.audience ? ` for audience ${this.settings.audience}` : ' (no audience check: set SERVICE_OIDC_AUDIENCE)');
  }

  async authenticate(request: AuthRequest): Promise<Principal> {
    const token = bearerToken(request.authorization);
    if (token === null) throw new UnauthenticatedError('missing token: send Authorization: Bearer <OIDC access token>');
    const claims = await this.verifier.verify(token, this.clock.now());
    if (typeof claims.sub !== 'string' || claims.sub === '') throw new UnauthenticatedError('token has no subject (sub)');

    const { roleClaim, tenantClaim, projectClaim } = this.settings;
    const role = roleFromClaim(claimValue(claims, roleClaim));
    if (role === null) {
      throw new ForbiddenError(`the token's "${roleClaim}" claim must name a role (${ROLES.join(', ')})`);
    }
    const tenant = claimValue(claims, tenantClaim);
    if (typeof tenant !== 'string' || !ID.test(tenant)) {
      throw new ForbiddenError(`the token's "${tenantClaim}" claim must name a tenant (${ID_RULE})`);
    }
    const project = claimValue(claims, projectClaim);
    if (project !== undefined && (typeof project !== 'string' || !ID.test(project))) {
      throw new ForbiddenError(`the token's "${projectClaim}" claim is not a valid project id (${ID_RULE})`);
    }
    return {
      kind: 'oidc',
      actor: `oidc:${claims.sub}`,
      role,
      tenant_id: tenant,
      project_id: project ?? null,
      rateKey: `oidc:${tenant}:${claims.sub}`,
      max_patterns: null,
    };
  }
}
