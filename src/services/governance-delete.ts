import { ForbiddenError } from '../core/errors.js';
import {
  DELETION_JOB_OPERATION, deletionRefusal, deletionResult, targetCovers, type DeletionCaller, type DeletionTarget,
} from '../core/governance.js';
import type { DeletionKind, DeletionResultResponse } from '../contracts/governance.js';
import type { Scope } from '../core/types.js';
import { writeAudit, type RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';

/**
 * Governance deletions (docs/behavior.md "Governance"): a project, a tenant, or the caller's
 * own scope, with the full cascade of the storage's deleteScope, keys revoked and audit detail
 * cleared. The deletion itself is audited afterwards with who, what and the counts.
 */
export const DeletionAuditKind = {
  project: 'PROJECT_DELETED',
  tenant: 'TENANT_DELETED',
  scope: 'SCOPE_DELETED',
  dryRun: 'DELETION_DRY_RUN',
} as const;

/**
 * The deletion result with a warning when the caller's own key is among the keys it revokes
 * (or, on a dry run, would revoke): the next request with that key will be refused.
 */
export function warnAboutOwnKey(
  result: DeletionResultResponse,
  caller: { kind: string; tenant_id: string; project_id: string | null },
  target: DeletionTarget,
): DeletionResultResponse {
  // Only stored keys (DB auth) are revoked; env, dev and OIDC callers keep working.
  if (caller.kind !== 'db' || result.keys_revoked === 0 || !targetCovers(target, caller)) return result;
  const warning = result.dry_run
    ? 'your own API key is among the keys this deletion would revoke: requests with it will be refused afterwards'
    : 'your own API key was revoked by this deletion: requests with it are refused from now on';
  return { ...result, warnings: [...(result.warnings ?? []), warning] };
}

/** Refuses (403) what the caller may not delete; call before deleting or queueing. */
export function authorizeDeletion(caller: DeletionCaller, target: DeletionTarget): void {
  const refusal = deletionRefusal(caller, target);
  if (refusal) throw new ForbiddenError(refusal);
}

/**
 * Deletes (or with dryRun only counts) everything of an authorised target. PostgreSQL storage
 * revokes the target's keys in its own transaction; JSON storage with DB-mode keys has them
 * revoked (and their audit trail scrubbed) through the key store right after.
 */
export async function deleteTarget(
  deps: ServiceDeps,
  target: DeletionTarget,
  input: { dry_run: boolean; kind: DeletionKind; caller_scope: Scope },
  ctx: RequestContext,
): Promise<DeletionResultResponse> {
  const { storage } = deps;
  const opts = { at: deps.clock.now().toISOString(), keepRunningOperations: [DELETION_JOB_OPERATION] };
  const keysApart = deps.keyStore && storage.kind !== 'postgres' ? deps.keyStore : null;
  const keyTarget = { tenant_id: target.tenant_id, ...(target.project_id === null ? {} : { project_id: target.project_id }) };

  let extraKeys = 0;
  let counts;
  if (input.dry_run) {
    counts = await storage.governance.countScope(target, opts);
    if (keysApart) extraKeys = await keysApart.keys.countActive(keyTarget);
  } else {
    counts = await storage.governance.deleteScope(target, opts);
    if (keysApart) {
      extraKeys = await keysApart.keys.revokeAll(keyTarget, opts.at);
      await keysApart.audit.scrub(target);
    }
  }
  // The spec's deletion result plus (+) dry_run.
  const result: DeletionResultResponse = { ...deletionResult(target, counts, extraKeys), dry_run: input.dry_run };
  // Written after the scrub, so the record of the deletion itself keeps its detail.
  await writeAudit(deps, input.dry_run ? DeletionAuditKind.dryRun : DeletionAuditKind[input.kind], input.caller_scope, ctx, {
    ...result,
    kind: input.kind,
  });
  return result;
}
