// Secrets are hashed and compared in one place (src/services/api-key-secrets.ts); the names
// here are the ones the HTTP layer uses.
export { hashApiKey as sha256, secretMatches } from '../../src/services/api-key-secrets.js';

/** The token of an `Authorization: Bearer <token>` header; null when absent or another scheme. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[1] : null;
}
