import { MAX_RETENTION_DAYS, MIN_RETENTION_DAYS } from './vocabulary.js';

/**
 * Retention rules (docs/behavior.md "Governance"), pure. A pattern expires at its own `expires_at`
 * when it has one; otherwise `updated_at` + the effective retention days, where the project's
 * setting wins over the tenant's, and 365 days applies when neither is set.
 */

export const DEFAULT_RETENTION_DAYS = 365;
export { MIN_RETENTION_DAYS, MAX_RETENTION_DAYS };
export const DAY_MS = 86_400_000;

export type RetentionSource = 'project' | 'tenant' | 'default';

/** What is configured for a scope: the project's and its tenant's retention_days (null: unset). */
export interface RetentionSettings {
  project_days: number | null;
  tenant_days: number | null;
}

/** The retention that applies to a scope's patterns without an expires_at of their own. */
export interface RetentionPolicy {
  retention_days: number;
  source: RetentionSource;
}

/** A whole number of days within [1, 36500]. */
export function isValidRetentionDays(days: unknown): days is number {
  return typeof days === 'number' && Number.isInteger(days) && days >= MIN_RETENTION_DAYS && days <= MAX_RETENTION_DAYS;
}

/** A stored value outside the allowed range (hand-edited file, old row) counts as unset. */
const usable = isValidRetentionDays;

export function effectivePolicy(settings: RetentionSettings): RetentionPolicy {
  if (usable(settings.project_days)) return { retention_days: settings.project_days, source: 'project' };
  if (usable(settings.tenant_days)) return { retention_days: settings.tenant_days, source: 'tenant' };
  return { retention_days: DEFAULT_RETENTION_DAYS, source: 'default' };
}

export interface RetainedPattern {
  expires_at: string | null;
  updated_at: string;
}

/**
 * When the pattern expires, in epoch milliseconds, and which rule decided it. An unparseable
 * expires_at is ignored (the policy applies) rather than deleting or keeping data forever on
 * a typo; an unparseable updated_at yields NaN, which never compares as expired.
 */
export function expiryOf(pattern: RetainedPattern, policy: RetentionPolicy): { at: number; source: RetentionSource | 'pattern' } {
  if (pattern.expires_at !== null) {
    const explicit = Date.parse(pattern.expires_at);
    if (!Number.isNaN(explicit)) return { at: explicit, source: 'pattern' };
  }
  return { at: Date.parse(pattern.updated_at) + policy.retention_days * DAY_MS, source: policy.source };
}

/** True once `now` has reached the pattern's expiry (the expiry instant itself is past retention). */
export function isExpired(pattern: RetainedPattern, policy: RetentionPolicy, now: Date): boolean {
  return now.getTime() >= expiryOf(pattern, policy).at;
}
