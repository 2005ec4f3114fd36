import { QuotaExceededError } from '../../../core/errors.js';
import type { TenantPatternQuota } from '../../../ports/storage.js';
import type { Queryer } from './db.js';

/**
 * First key of the tenant pattern-quota advisory locks (the second is a hash of the tenant),
 * apart from the scope locks (index.ts) and the migration lock.
 */
const TENANT_QUOTA_LOCK_CLASS = 18_005;

/** The tenant's stored patterns, summed over its projects' trigger-kept counts (0002_pattern_counts); billing.countPatterns uses it too. */
export const TENANT_PATTERN_COUNT_SQL = 'SELECT coalesce(sum(n), 0) AS n FROM pattern_counts WHERE tenant_id = $1';

/**
 * Inside a write transaction, before its first write: when `adding` new patterns come with a
 * tenant quota, takes the tenant's quota lock on this transaction's own connection (held to
 * COMMIT or ROLLBACK; no second connection, so a small pool cannot deadlock on it), counts
 * the tenant's patterns and refuses with QuotaExceededError when the inserts would pass the
 * limit (docs/behavior.md "Billing"). Writers of one tenant, in any project and any process,
 * thus check and insert one after the other. Taken first, it is never awaited while this
 * transaction holds a row lock, so it adds no lock-order cycle with the row locks after it.
 */
export async function lockTenantQuota(
  q: Queryer,
  tenantId: string,
  quota: TenantPatternQuota | null | undefined,
  adding: number,
): Promise<void> {
  if (!quota || adding <= 0) return;
  await q.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [TENANT_QUOTA_LOCK_CLASS, tenantId]);
  // A statement of its own, after the lock is granted: under READ COMMITTED its snapshot
  // includes every insert the lock's previous holder committed before releasing it.
  const res = await q.query<{ n: string }>(TENANT_PATTERN_COUNT_SQL, [tenantId]);
  const current = Number(res.rows[0].n);
  if (current + adding > quota.limit) throw new QuotaExceededError('patterns', current, quota.limit, quota.reset_date);
}
