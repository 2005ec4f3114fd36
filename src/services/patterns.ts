import { NotFoundError, ValidationError } from '../core/errors.js';
import type { Scope } from '../core/types.js';
import { AuditKind, writeAudit, type RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import { idFromPatternKey } from './ids.js';
import { toExportRecord } from './import-export.js';
import type { DeletePatternResponse, ExportRecord, PatternHistoryResponse } from '../contracts/memory.js';

/** How many eval observations the history shows (the ranking reads the same recent ones). */
export const HISTORY_EVALS = 20;

/** `patterns/<id>` → id, or a 422 naming the field (checked before storage is touched). */
export function parsePatternKey(key: string, path = 'key'): string {
  const id = idFromPatternKey(key);
  if (id === null) {
    throw new ValidationError('invalid pattern key', [
      { path, message: 'must look like patterns/<id> (id: lower-case letters and digits)' },
    ]);
  }
  return id;
}

/** (+) One pattern in the export record shape (GET /v1/patterns/{key}, `service patterns get`). */
export async function getPattern(deps: ServiceDeps, scope: Scope, key: string): Promise<ExportRecord> {
  const pattern = await deps.storage.patterns.get(scope, parsePatternKey(key));
  if (!pattern) throw new NotFoundError(`pattern ${key} not found`);
  return toExportRecord(pattern);
}

/** (+) A pattern's skill tags and recent eval observations (GET /v1/patterns/{key}/history). */
export async function getPatternHistory(deps: ServiceDeps, scope: Scope, key: string): Promise<PatternHistoryResponse> {
  const id = parsePatternKey(key);
  if (!(await deps.storage.patterns.get(scope, id))) throw new NotFoundError(`pattern ${key} not found`);
  const [skills, evals] = await Promise.all([deps.storage.skills.get(scope, id), deps.storage.evals.recent(scope, [id], HISTORY_EVALS)]);
  return { pattern_key: key, skills: [...skills].sort(), eval_scores: evals.get(id) ?? [] };
}

/** Permanent delete of one pattern with its vector, eval observations and tags. */
export async function deletePattern(
  deps: ServiceDeps,
  scope: Scope,
  key: string,
  ctx: RequestContext,
): Promise<DeletePatternResponse> {
  const id = parsePatternKey(key);
  if (!(await deps.storage.patterns.delete(scope, id))) throw new NotFoundError(`pattern ${key} not found`);
  await writeAudit(deps, AuditKind.patternDeleted, scope, ctx, { pattern_key: key });
  return { deleted: true, pattern_key: key };
}
