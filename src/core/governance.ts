import type { Classification, Scope } from './types.js';

/**
 * Governance deletions (docs/behavior.md "Governance"): what a deletion targets and what it
 * reports. Pure: no I/O.
 *
 * A target is one project of a tenant, or the whole tenant (every project it has). The
 * cascade removes patterns and their vectors, eval observations, feedback clusters, skill tags,
 * metrics, ROI events and rollups, jobs and retention settings; keys of the target are revoked
 * (their rows stay, revoked); audit events of the target keep kind and time, lose their detail.
 */
export interface DeletionTarget {
  tenant_id: string;
  /** null: the whole tenant. */
  project_id: string | null;
}

/** The spec's deletion result. project_id is "*" for a whole tenant. */
export interface DeletionResult {
  tenant_id: string;
  project_id: string;
  patterns_deleted: number;
  jobs_deleted: number;
  keys_revoked: number;
  projects_deleted: number;
}

/** What a storage deleted (or, on a dry run, would delete) of a target. */
export interface DeletionCounts {
  patterns_deleted: number;
  jobs_deleted: number;
  /** Projects of the target that held anything (data, settings, keys). */
  projects_deleted: number;
  /** Keys revoked by the storage itself (PostgreSQL keeps the keys in the same database); 0 otherwise. */
  keys_revoked: number;
}

/** The job operation of an asynchronous deletion: a deletion never deletes such a job while it runs. */
export const DELETION_JOB_OPERATION = 'governance_delete';

/** Project ids of a tenant-wide deletion result. */
export const ALL_PROJECTS = '*';

export function projectTarget(tenantId: string, projectId: string): DeletionTarget {
  return { tenant_id: tenantId, project_id: projectId };
}

export function tenantTarget(tenantId: string): DeletionTarget {
  return { tenant_id: tenantId, project_id: null };
}

/** True when the scope lies inside the target. */
export function targetCovers(target: DeletionTarget, scope: { tenant_id: string | null; project_id: string | null }): boolean {
  if (scope.tenant_id !== target.tenant_id) return false;
  return target.project_id === null || scope.project_id === target.project_id;
}

export function scopeOfTarget(target: DeletionTarget): Scope | null {
  return target.project_id === null ? null : { tenant_id: target.tenant_id, project_id: target.project_id };
}

export function deletionResult(target: DeletionTarget, counts: DeletionCounts, extraKeysRevoked = 0): DeletionResult {
  return {
    tenant_id: target.tenant_id,
    project_id: target.project_id ?? ALL_PROJECTS,
    patterns_deleted: counts.patterns_deleted,
    jobs_deleted: counts.jobs_deleted,
    keys_revoked: counts.keys_revoked + extraKeysRevoked,
    projects_deleted: counts.projects_deleted,
  };
}

/**
 * `classification=public,internal` → the listed classifications, de-duplicated, in the order
 * given; unknown names come back in `unknown` so the edge can answer 422 naming them.
 */
export function parseClassificationList(
  raw: string,
  allowed: readonly Classification[],
): { classifications: Classification[]; unknown: string[] } {
  const classifications: Classification[] = [];
  const unknown: string[] = [];
  for (const part of raw.split(',').map((s) => s.trim())) {
    if (part === '') continue;
    if ((allowed as readonly string[]).includes(part)) {
      if (!classifications.includes(part as Classification)) classifications.push(part as Classification);
    } else {
      unknown.push(part);
    }
  }
  return { classifications, unknown };
}

/** Who asks for a deletion: the principal's tenant, bound project (null: any) and role. */
export interface DeletionCaller {
  tenant_id: string;
  project_id: string | null;
  role: 'reader' | 'editor' | 'admin' | 'owner';
}

/**
 * Why the caller may not delete the target, or null when it may (route permissions are
 * checked before this). Never across tenants. A key bound to one project deletes only that
 * project unless it is the tenant's owner; a whole tenant is its owner's alone.
 */
export function deletionRefusal(caller: DeletionCaller, target: DeletionTarget): string | null {
  if (target.tenant_id !== caller.tenant_id) return 'deletions are limited to your own tenant';
  if (target.project_id === null) return caller.role === 'owner' ? null : 'deleting a tenant is limited to its owner';
  if (caller.project_id !== null && caller.project_id !== target.project_id && caller.role !== 'owner') {
    return `this key is bound to project ${caller.project_id}; only an owner may delete another project of the tenant`;
  }
  return null;
}
