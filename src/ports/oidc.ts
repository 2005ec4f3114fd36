import type { JWTPayload } from 'jose';

/** What the verifier needs from config.auth.oidc. */
export interface OidcSettings {
  issuer: string;
  /** Expected `aud`; null skips the audience check (startup warns about it). */
  audience: string | null;
  /** (+) SERVICE_OIDC_JWKS_URL; when null the issuer's discovery document names it. */
  jwksUrl: string | null;
}

/** Verifies an OIDC access token against the issuer's published keys (built by src/app.ts). */
export interface OidcVerifier {
  /** The verified claims; UnauthenticatedError for a bad token, UnavailableError when the JWKS cannot be fetched. */
  verify(token: string, now: Date): Promise<JWTPayload>;
}
