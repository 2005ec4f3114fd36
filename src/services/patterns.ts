import { NotFoundError, ValidationError } from '../core/errors.js';
import { browseFilter, readableClassifications } from '../core/permissions.js';
import { idFromPatternKey, parsePatternKey, patternKey, toExportRecord, type PatternCursor, type PatternRecord, type Role, type Scope } from '../core/types.js';
import { AuditKind, writeAudit, type RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import type { DeletePatternResponse, ExportRecord, PatternHistoryResponse } from '../contracts/memory.js';
import type { PatternListInput, PatternListResponse } from '../contracts/patterns.js';
import { normalizedTimestamp } from '../contracts/common.js';

/** How many eval observations the history shows (the ranking reads the same recent ones). */
export const HISTORY_EVALS = 20;

/**
 * The pattern the role may browse (docs/behavior.md "Auth and scope"), else a 404 like an absent
 * one: a reader learns nothing of a pattern it may not read, not even that it exists.
 */
export async function browsablePattern(deps: ServiceDeps, scope: Scope, role: Role, key: string): Promise<PatternRecord> {
  const pattern = await deps.storage.patterns.get(scope, parsePatternKey(key));
  if (!pattern || !readableClassifications(role).includes(pattern.classification)) throw new NotFoundError(`pattern ${key} not found`);
  return pattern;
}

/** (+) One pattern in the export record shape (GET /v1/patterns/{key}, `service patterns get`). */
export async function getPattern(deps: ServiceDeps, scope: Scope, role: Role, key: string): Promise<ExportRecord> {
  return toExportRecord(await browsablePattern(deps, scope, role, key));
}

/** (+) A pattern's skill tags and recent eval observations (GET /v1/patterns/{key}/history). */
export async function getPatternHistory(deps: ServiceDeps, scope: Scope, role: Role, key: string): Promise<PatternHistoryResponse> {
  const { id } = await browsablePattern(deps, scope, role, key);
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
export async function listPatterns(deps: ServiceDeps, scope: Scope, role: Role, input: PatternListInput): Promise<PatternListResponse> {
  const { limit, cursor, ...filter } = input;
  const after = cursor === undefined ? null : decodeCursor(cursor);
  const rows = await deps.storage.patterns.list(scope, { limit: limit + 1, after, filter: browseFilter(role, filter) });
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

/**
 * The cursor: base64url of `[updated_at, id]`, the time in the stored form (normalizedTimestamp),
 * so it is at most 4/3 of 24 + 64 + 7 characters (128), inside the query's 200. A record kept
 * from before times were normalised on input is listed by the instant its storage compares.
 */
function encodeCursor(cursor: PatternCursor): string {
  const at = normalizedTimestamp(cursor.updated_at) ?? cursor.updated_at;
  return Buffer.from(JSON.stringify([at, cursor.id])).toString('base64url');
}

/**
 * A cursor this service wrote, or a 422 naming the field (never passed to storage unchecked):
 * it must decode to exactly what encodeCursor writes (a time in the stored form and range, a
 * pattern id) and encode back to the same text, so no other cursor gets through.
 */
function decodeCursor(cursor: string): PatternCursor {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && decoded.length === 2) {
      const [updated_at, id] = decoded as unknown[];
      if (
        typeof updated_at === 'string' && normalizedTimestamp(updated_at) === updated_at &&
        typeof id === 'string' && idFromPatternKey(patternKey(id)) === id && encodeCursor({ updated_at, id }) === cursor
      ) {
        return { updated_at, id };
      }
    }
  } catch {
    // Falls through to the 422 below.
  }
  throw new ValidationError('invalid cursor', [{ path: 'cursor', message: 'must be the next_cursor of a previous page, unchanged' }]);
}
