import { effectiveAuthMode, type Config } from '../../src/config/index.js';
import { UnauthenticatedError } from '../../src/core/errors.js';
import type { Role } from '../../src/core/types.js';
import type { Principal } from '../context.js';
import { bearerToken, secretMatches, sha256 } from './secrets.js';

/** What an authenticator may look at: headers only (auth runs before the body is read). */
export interface AuthRequest {
  authorization: string | undefined;
}

/**
 * One per auth mode. `authenticate` resolves the principal or throws UnauthenticatedError
 * (401). DB keys and OIDC plug in by implementing this and adding a case to
 * createAuthenticator; nothing else in the server changes.
 */
export interface Authenticator {
  readonly mode: Principal['kind'];
  /** Startup message for operators (dev mode warns that nothing is checked). */
  readonly description: string;
  authenticate(request: AuthRequest): Promise<Principal>;
}

export const DEFAULT_TENANT = 'default';

/** SERVICE_API_KEYS: static keys, every one with SERVICE_ENV_AUTH_ROLE. */
export class EnvKeyAuthenticator implements Authenticator {
  readonly mode = 'env' as const;
  private readonly digests: Buffer[];

  constructor(keys: readonly string[], private readonly role: Role) {
    if (keys.length === 0) throw new Error('env auth needs at least one key in SERVICE_API_KEYS');
    this.digests = keys.map(sha256);
  }

  get description(): string {
    return `env keys (${this.digests.length} configured, role ${this.role})`;
  }

  async authenticate(request: AuthRequest): Promise<Principal> {
    const token = bearerToken(request.authorization);
    if (token === null) throw new UnauthenticatedError('missing API key: send Authorization: Bearer <key>');
    // Compare against every key, without stopping at the first match, so timing says nothing
    // about which key (or how many) matched.
    let matched: Buffer | null = null;
    for (const digest of this.digests) if (secretMatches(token, digest) && matched === null) matched = digest;
    if (matched === null) throw new UnauthenticatedError('invalid API key');
    return {
      kind: 'env',
      actor: 'env',
      role: this.role,
      tenant_id: DEFAULT_TENANT,
      project_id: null,
      rateKey: `env:${matched.toString('hex').slice(0, 16)}`,
      max_patterns: null,
    };
  }
}

/** Development without keys: every request is the owner of the default tenant. */
export class DevAuthenticator implements Authenticator {
  readonly mode = 'dev' as const;
  readonly description = 'NO AUTHENTICATION (development mode): every request acts as owner; never expose this server';

  async authenticate(): Promise<Principal> {
    return { kind: 'dev', actor: 'dev', role: 'owner', tenant_id: DEFAULT_TENANT, project_id: null, rateKey: null, max_patterns: null };
  }
}

/** The authenticator of the configured (or auto-resolved) mode. */
export function createAuthenticator(config: Config): Authenticator {
  const mode = effectiveAuthMode(config);
  switch (mode) {
    case 'env':
      return new EnvKeyAuthenticator(config.auth.apiKeys, config.auth.envRole);
    case 'dev':
      return new DevAuthenticator();
    case 'db':
    case 'oidc':
      // These need the composed App (key store, clock): server/auth/select.ts builds them.
      throw new Error(`the "${mode}" authenticator is built by authenticatorFor(app) in server/auth/select.ts`);
  }
}
