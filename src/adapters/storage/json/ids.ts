import path from 'node:path';
import { ValidationError } from '../../../core/errors.js';
import type { Scope } from '../../../core/types.js';

/**
 * Ids become directory names, so they are checked against strict allow-lists BEFORE any path
 * is built: no dots, no separators, no way to climb out of the data path.
 */
const SCOPE_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Minted ids are [0-9a-z]; imported ones (the reference system's keys) add A-Z, _ and -. */
const PATTERN_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function isPatternId(id: unknown): id is string {
  return typeof id === 'string' && PATTERN_ID.test(id);
}

export function assertPatternId(id: unknown): asserts id is string {
  if (!isPatternId(id)) {
    throw new ValidationError('invalid pattern id', [{ path: 'id', message: 'must match [A-Za-z0-9_-]{1,64}' }]);
  }
}

export function assertScope(scope: Scope): void {
  const errors = [];
  if (typeof scope?.tenant_id !== 'string' || !SCOPE_ID.test(scope.tenant_id)) {
    errors.push({ path: 'tenant_id', message: 'must match ^[A-Za-z0-9_-]{1,64}$' });
  }
  if (typeof scope?.project_id !== 'string' || !SCOPE_ID.test(scope.project_id)) {
    errors.push({ path: 'project_id', message: 'must match ^[A-Za-z0-9_-]{1,64}$' });
  }
  if (errors.length > 0) throw new ValidationError('invalid scope', errors);
}

/** Map key of a scope; '/' cannot occur inside a validated id, so keys never collide. */
export function scopeKey(scope: Scope): string {
  return `${scope.tenant_id}/${scope.project_id}`;
}

export const TENANTS_DIR = 'tenants';
export const PROJECTS_DIR = 'projects';

/** <data>/tenants/<tenant>/projects/<project>; validates first. */
export function scopeDir(dataPath: string, scope: Scope): string {
  assertScope(scope);
  return path.join(dataPath, TENANTS_DIR, scope.tenant_id, PROJECTS_DIR, scope.project_id);
}

/** True when a directory name found on disk could be a scope id (foreign files are skipped). */
export function isScopeIdName(name: string): boolean {
  return SCOPE_ID.test(name);
}
