import type { App } from '../../src/app.js';
import { effectiveAuthMode } from '../../src/config/index.js';
import { createAuthenticator, type Authenticator } from './authenticator.js';
import { DbKeyAuthenticator } from './db-keys.js';
import { OidcAuthenticator } from './oidc.js';

/**
 * The authenticator of the configured mode (docs/behavior.md "Authentication"): auto → db when
 * a database URL is set, else env keys, else dev; db → API keys in PostgreSQL; oidc → JWTs.
 * It takes what src/app.ts composed (the key store from ServiceDeps, the OIDC verifier from
 * App) and builds no adapter itself.
 */
export function authenticatorFor(app: App): Authenticator {
  const { config, clock, keyStore } = app.deps;
  const mode = effectiveAuthMode(config);
  if (mode === 'db') {
    if (!keyStore) throw new Error('DB auth mode needs the key store: createApp opens it when SERVICE_DATABASE_URL is set');
    return new DbKeyAuthenticator(keyStore.keys, clock);
  }
  if (mode === 'oidc') {
    const oidc = config.auth.oidc;
    if (!oidc.issuer) throw new Error('SERVICE_OIDC_ISSUER is required when SERVICE_AUTH_MODE=oidc');
    if (!app.oidcVerifier) throw new Error('OIDC auth mode needs the token verifier: createApp builds it when SERVICE_AUTH_MODE=oidc');
    return new OidcAuthenticator(oidc, app.oidcVerifier, clock);
  }
  return createAuthenticator(config);
}
