import { ROLES, type Role } from '../core/types.js';
import { bool, ConfigError, list, oneOf, str, url, type Env } from './env-readers.js';
import type { StorageSettings } from './storage.js';

export type AuthMode = 'auto' | 'env' | 'db' | 'dev' | 'oidc';

export interface AuthSettings {
  auth: {
    mode: AuthMode;
    apiKeys: string[];
    allowNoAuth: boolean;
    environment: string | null;
    envRole: Role;
    bootstrapToken: string | null;
    oidc: {
      issuer: string | null;
      audience: string | null;
      jwksUrl: string | null;
      roleClaim: string;
      tenantClaim: string;
      projectClaim: string;
    };
  };
}

/** What the auth mode is judged against: the auth settings and whether there is a database. */
type AuthContext = AuthSettings & { storage: Pick<StorageSettings, 'databaseUrl'> };

const LOCAL_ENVIRONMENTS = ['local', 'development', 'dev', 'test'];

export function authSettings(env: Env): AuthSettings {
  const mode = oneOf(env, 'SERVICE_AUTH_MODE', ['auto', 'env', 'db', 'dev', 'oidc'] as const, 'auto');
  const bootstrapToken = str(env, 'SERVICE_BOOTSTRAP_TOKEN');
  if (bootstrapToken !== null && bootstrapToken.length < 32) {
    throw new ConfigError('SERVICE_BOOTSTRAP_TOKEN', 'must be at least 32 characters');
  }
  return {
    auth: {
      mode,
      apiKeys: list(env, 'SERVICE_API_KEYS'),
      allowNoAuth: bool(env, 'SERVICE_ALLOW_NO_AUTH', false),
      environment: str(env, 'SERVICE_ENVIRONMENT'),
      envRole: oneOf(env, 'SERVICE_ENV_AUTH_ROLE', ROLES, 'owner'),
      bootstrapToken,
      oidc: {
        issuer: url(env, 'SERVICE_OIDC_ISSUER'),
        audience: str(env, 'SERVICE_OIDC_AUDIENCE'),
        jwksUrl: url(env, 'SERVICE_OIDC_JWKS_URL'),
        roleClaim: str(env, 'SERVICE_OIDC_ROLE_CLAIM') ?? 'role',
        tenantClaim: str(env, 'SERVICE_OIDC_TENANT_CLAIM') ?? 'tenant_id',
        projectClaim: str(env, 'SERVICE_OIDC_PROJECT_CLAIM') ?? 'project_id',
      },
    },
  };
}

/**
 * Throws when the auth mode cannot work with the rest of the configuration. Dev mode
 * (explicit, or auto without keys or a database) is only allowed locally.
 */
export function checkAuthMode(config: AuthContext): void {
  const { auth } = config;
  const local = auth.environment === null || LOCAL_ENVIRONMENTS.includes(auth.environment.toLowerCase());
  if (auth.mode === 'dev') {
    if (!auth.allowNoAuth) throw new ConfigError('SERVICE_AUTH_MODE', 'dev mode needs SERVICE_ALLOW_NO_AUTH=true');
    if (!local) throw new ConfigError('SERVICE_AUTH_MODE', `dev mode is blocked in environment "${auth.environment}"`);
  }
  if (auth.mode === 'env' && auth.apiKeys.length === 0) {
    throw new ConfigError('SERVICE_API_KEYS', 'env auth mode needs at least one key');
  }
  if (auth.mode === 'db' && !config.storage.databaseUrl) {
    throw new ConfigError('SERVICE_AUTH_MODE', 'db auth mode needs SERVICE_DATABASE_URL');
  }
  if (auth.mode === 'oidc' && !auth.oidc.issuer) {
    throw new ConfigError('SERVICE_OIDC_ISSUER', 'required when SERVICE_AUTH_MODE=oidc');
  }
  if (auth.mode === 'auto' && !config.storage.databaseUrl && auth.apiKeys.length === 0 && !local) {
    throw new ConfigError('SERVICE_AUTH_MODE', `no API keys and no database in environment "${auth.environment}": refusing to run unauthenticated`);
  }
}

/** The auth mode `auto` resolves to. */
export function effectiveAuthMode(config: AuthContext): Exclude<AuthMode, 'auto'> {
  const { mode } = config.auth;
  if (mode !== 'auto') return mode;
  if (config.storage.databaseUrl) return 'db';
  if (config.auth.apiKeys.length > 0) return 'env';
  return 'dev';
}
