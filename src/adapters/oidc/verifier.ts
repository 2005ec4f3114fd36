import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { UnauthenticatedError, UnavailableError } from '../../core/errors.js';
import type { OidcSettings, OidcVerifier } from '../../ports/oidc.js';

export type { OidcSettings, OidcVerifier };

// Asymmetric algorithms only: a JWKS publishes public keys, and accepting HS* or `none`
// would open the classic algorithm-confusion holes.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** Allowed clock skew between the identity provider and this server. */
const CLOCK_TOLERANCE_SECONDS = 30;
const FETCH_TIMEOUT_MS = 5_000;

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * Where the issuer publishes its keys: its OpenID discovery document's `jwks_uri`, else the
 * conventional `<issuer>/.well-known/jwks.json` when the issuer has no discovery document.
 * A network failure is an outage (thrown), not a reason to guess.
 */
async function discoverJwksUrl(issuer: string): Promise<URL> {
  const base = trimSlash(issuer);
  let res: Response;
  try {
    res = await fetch(`${base}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (err) {
    throw new UnavailableError(`the identity provider ${base} cannot be reached for its discovery document`, { cause: err });
  }
  if (res.ok) {
    const doc = (await res.json().catch(() => null)) as { jwks_uri?: unknown } | null;
    if (doc && typeof doc.jwks_uri === 'string') return new URL(doc.jwks_uri);
  } else {
    await res.body?.cancel();
  }
  return new URL(`${base}/.well-known/jwks.json`);
}

/** A failure to obtain the keys (the provider's problem, 503) rather than a bad token (401). */
function isKeySetOutage(err: unknown): boolean {
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) return false;
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return true;
  // jose reports a non-200 JWKS answer as a plain JOSEError naming the key set; fetch
  // failures (refused, reset) surface as TypeErrors.
  if (err instanceof errors.JOSEError) return /JSON Web Key Set/i.test(err.message);
  return err instanceof TypeError;
}

/** Why a token was refused, worded for the 401 detail (never the token itself). */
function reasonOf(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'token expired';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'token signature is invalid';
  if (err instanceof errors.JWKSNoMatchingKey) return 'token is not signed by a key of the issuer';
  if (err instanceof errors.JWTClaimValidationFailed) return `token claim "${err.claim}" is invalid (${err.reason})`;
  if (err instanceof errors.JOSEAlgNotAllowed) return 'token signing algorithm is not allowed';
  return 'malformed token';
}

/**
 * Verifies JWTs against the issuer's JWKS (jose's remote key set: cached, refetched on an
 * unknown `kid` after a cooldown, so key rotation at the provider just works).
 */
export function createOidcVerifier(settings: OidcSettings): OidcVerifier {
  let keySet: Promise<JWTVerifyGetKey> | null = null;
  const resolveKeySet = (): Promise<JWTVerifyGetKey> => {
    keySet ??= (async () => {
      const url = settings.jwksUrl ? new URL(settings.jwksUrl) : await discoverJwksUrl(settings.issuer);
      return createRemoteJWKSet(url, { timeoutDuration: FETCH_TIMEOUT_MS });
    })();
    // A failed discovery is retried on the next request instead of being remembered.
    keySet.catch(() => {
      keySet = null;
    });
    return keySet;
  };

  return {
    async verify(token, now) {
      const getKey = await resolveKeySet();
      try {
        const { payload } = await jwtVerify(token, getKey, {
          issuer: settings.issuer,
          audience: settings.audience ?? undefined,
          algorithms: ALGORITHMS,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: now,
        });
        return payload;
      } catch (err) {
        if (isKeySetOutage(err)) {
          throw new UnavailableError('the identity provider\'s signing keys (JWKS) cannot be fetched; try again later', { cause: err });
        }
        if (err instanceof errors.JOSEError) throw new UnauthenticatedError(reasonOf(err));
        throw err;
      }
    },
  };
}
