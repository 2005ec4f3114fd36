import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/**
 * API key material (docs/behavior.md "Auth and scope"): `svc_` + 43 base64url characters (32
 * random bytes). Only the SHA-256 is stored; the first 12 characters are a display prefix.
 */
export const API_KEY_PREFIX = 'svc_';
export const API_KEY_FORMAT = /^svc_[A-Za-z0-9_-]{43}$/;
export const DISPLAY_PREFIX_LENGTH = 12;

export interface GeneratedKey {
  key_id: string;
  /** Shown to the caller once, never stored or logged. */
  secret: string;
  hash: Buffer;
  prefix: string;
}

export function hashApiKey(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export function generateApiKey(): GeneratedKey {
  const secret = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key_id: randomUUID(), secret, hash: hashApiKey(secret), prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH) };
}

/**
 * The project's one constant-time comparison (keys, bootstrap and metrics tokens all come
 * here). Digests of different lengths are simply unequal rather than an exception.
 */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Constant-time equality of a presented secret with a stored SHA-256 digest. Hashing first
 * makes both sides the same length, so neither content nor length leaks through timing.
 */
export function secretMatches(presented: string, digest: Uint8Array): boolean {
  return digestsEqual(hashApiKey(presented), digest);
}

/** Constant-time equality of two secrets of any length (both hashed first). */
export function secretsEqual(presented: string, expected: string): boolean {
  return secretMatches(presented, hashApiKey(expected));
}
