import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256 of a secret: what is kept in memory and compared, never the secret itself. */
export function sha256(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * Constant-time equality of a presented secret with a stored digest. Hashing first makes both
 * sides the same length, so neither the content nor the length leaks through timing.
 */
export function secretMatches(presented: string, digest: Buffer): boolean {
  return timingSafeEqual(sha256(presented), digest);
}

/** The token of an `Authorization: Bearer <token>` header; null when absent or another scheme. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[1] : null;
}
