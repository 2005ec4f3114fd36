import { NotFoundError, ValidationError } from '../core/errors.js';
import { ID } from '../core/vocabulary.js';
import { parsePatternKey, patternKey, toExportRecord, type PatternCursor, type Scope } from '../core/types.js';
import { AuditKind, writeAudit, type RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import type { DeletePatternResponse, ExportRecord, PatternHistoryResponse } from '../contracts/memory.js';
import type { PatternListInput, PatternListResponse } from '../contracts/patterns.js';

/** How many eval observations the history shows (the ranking reads the same recent ones). */
export const HISTORY_EVALS = 20;

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

/**
 * (+) GET /v1/patterns: one page of the scope's patterns, newest updated_at first. The cursor
 * is the last listed (updated_at, id), opaque to callers; one more row than the page is read
 * to know whether another page follows, so the last page says so (next_cursor null).
 */
export async function listPatterns(deps: ServiceDeps, scope: Scope, input: PatternListInput): Promise<PatternListResponse> {
  const { limit, cursor, ...filter } = input;
  const after = cursor === undefined ? null : decodeCursor(cursor);
  const rows = await deps.storage.patterns.list(scope, { limit: limit + 1, after, filter });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    patterns: page.map((p) => ({
      key: patternKey(p.id), task: p.task, classification: p.classification, source: p.source, success_score: p.success_score,
      eval_score: p.eval_score, reuse_count: p.reuse_count, created_at: p.created_at, updated_at: p.updated_at,
    })),
    next_cursor: rows.length > limit && last ? encodeCursor({ updated_at: last.updated_at, id: last.id }) : null,
  };
}

function encodeCursor(cursor: PatternCursor): string {
  return Buffer.from(JSON.stringify([cursor.updated_at, cursor.id])).toString('base64url');
}

/** A cursor this service wrote, or a 422 naming the field (never passed to storage unchecked). */
function decodeCursor(cursor: string): PatternCursor {
  try {
    const [updated_at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof updated_at === 'string' && !Number.isNaN(Date.parse(updated_at)) && typeof id === 'string' && ID.test(id)) {
      return { updated_at, id };
    }
  } catch {
    // Falls through to the 422 below.
  }
  throw new ValidationError('invalid cursor', [{ path: 'cursor', message: 'must be the next_cursor of a previous page, unchanged' }]);
}
