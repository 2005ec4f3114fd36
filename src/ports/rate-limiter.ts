import type { RateDecision } from '../core/rate-window.js';

export type { RateDecision } from '../core/rate-window.js';

/**
 * Counts requests per bucket (a client IP and rate class, or a key) in fixed windows
 * (docs/behavior.md "Rate limits"). In memory for the JSON store (one process); shared through
 * the database for PostgreSQL storage, so every process on it counts against one limit.
 */
export interface RateLimiter {
  /** Which count decides: this process's, or the one shared by every process on the database. */
  readonly kind: 'memory' | 'postgres';
  /** Counts one request against `limit` in the current window. Never rejects. */
  hit(bucket: string, limit: number): Promise<RateDecision>;
  close(): Promise<void>;
}
