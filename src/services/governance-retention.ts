import { effectivePolicy, expiryOf, isExpired, type RetentionPolicy } from '../core/retention.js';
import type {
  RetentionApplyInput, RetentionApplyResponse, RetentionPolicyResponse, RetentionUpdateInput,
} from '../contracts/governance.js';
import type { Scope } from '../core/types.js';
import { systemContext, writeAudit, type RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import { outcomeCutoff } from './outcomes.js';

/**
 * Retention (docs/behavior.md "Governance"): a pattern's expires_at → project retention_days
 * → tenant retention_days → 365 days, counted from updated_at. Settings live in
 * storage.projects (JSON: per-scope settings files; PostgreSQL: projects/tenants rows).
 */

export const RetentionAuditKind = {
  updated: 'RETENTION_UPDATED',
  applied: 'RETENTION_APPLIED',
} as const;

/** The policy that applies to the scope's patterns that carry no expires_at. */
export async function getRetentionPolicy(deps: ServiceDeps, scope: Scope): Promise<RetentionPolicy> {
  return effectivePolicy(await deps.storage.projects.getRetention(scope));
}

/**
 * Sets the project's retention_days (1–36500), or clears it with null to inherit the tenant's
 * value (or the default); answers the policy now in effect.
 */
export async function updateRetentionPolicy(
  deps: ServiceDeps,
  scope: Scope,
  input: RetentionUpdateInput,
  ctx: RequestContext = systemContext,
): Promise<RetentionPolicyResponse> {
  await deps.storage.projects.setProjectRetention(scope, input.retention_days, deps.clock.now().toISOString());
  const policy = await getRetentionPolicy(deps, scope);
  await writeAudit(deps, RetentionAuditKind.updated, scope, ctx, { project_retention_days: input.retention_days, ...policy });
  return policy;
}

/**
 * Deletes every pattern of the scope past its effective retention (pattern, vector, eval
 * observations and tags go together), or with dry_run only counts them. The scan collects
 * ids first and deletes after, so deleting never disturbs the paging of the scan. Each
 * candidate is re-read just before its delete: a pattern refreshed meanwhile (a better run
 * replacing it moves updated_at) is kept.
 */
export async function applyRetention(
  deps: ServiceDeps,
  scope: Scope,
  input: RetentionApplyInput,
  ctx: RequestContext = systemContext,
): Promise<RetentionApplyResponse> {
  const { storage } = deps;
  const policy = await getRetentionPolicy(deps, scope);
  const now = deps.clock.now();
  // Patterns past their own expires_at go first, then those past the project → tenant →
  // default policy (docs/behavior.md "Governance"): an interrupted run has removed the explicit expiries.
  const ownExpiry: string[] = [];
  const byPolicy: string[] = [];
  for await (const pattern of storage.patterns.iterate(scope)) {
    if (!isExpired(pattern, policy, now)) continue;
    (expiryOf(pattern, policy).source === 'pattern' ? ownExpiry : byPolicy).push(pattern.id);
  }
  const expired = [...ownExpiry, ...byPolicy];

  let purged = 0;
  // Recall traces and outcomes follow their own, shorter retention (docs/behavior.md "Outcomes").
  let outcomes = { traces: 0, outcomes: 0 };
  if (input.dry_run) {
    purged = expired.length;
  } else {
    outcomes = await storage.outcomes.purgeBefore(scope, outcomeCutoff(deps));
    for (const id of expired) {
      const current = await storage.patterns.get(scope, id);
      if (current === null || !isExpired(current, policy, now)) continue;
      if (await storage.patterns.delete(scope, id)) purged += 1;
    }
  }

  await writeAudit(deps, RetentionAuditKind.applied, scope, ctx, {
    purged_count: purged,
    outcome_traces_purged: outcomes.traces,
    outcomes_purged: outcomes.outcomes,
    dry_run: input.dry_run,
    retention_days: policy.retention_days,
    source: policy.source,
  });
  return { purged_count: purged, dry_run: input.dry_run };
}
