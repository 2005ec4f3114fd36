import { QuotaExceededError } from '../../../core/errors.js';
import type { TenantPatternQuota } from '../../../ports/storage.js';
import type { ScopeRegistry } from './scope-registry.js';

/**
 * Refuses `adding` new patterns that would take the tenant past its quota (docs/behavior.md
 * "Billing"). Synchronous on purpose: called inside a ScopeStore.mutate `prepare`, which the
 * store applies to memory before its next await, so no write of another project of the
 * tenant can come between this count and the insert it allows. The count is what memory
 * holds in every loaded scope of the tenant (as billing.countPatterns counts), writes whose
 * journal line is still in flight included.
 */
export function assertTenantRoom(
  registry: ScopeRegistry,
  tenantId: string,
  quota: TenantPatternQuota | null | undefined,
  adding: number,
): void {
  if (!quota || adding <= 0) return;
  let current = 0;
  for (const { scope, store } of registry.entries()) if (scope.tenant_id === tenantId) current += store.state.patterns.size;
  if (current + adding > quota.limit) throw new QuotaExceededError('patterns', current, quota.limit, quota.reset_date);
}
