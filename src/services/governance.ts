import { ValidationError, NotFoundError } from '../core/errors.js';
import { parseClassificationList } from '../core/governance.js';
import { CLASSIFICATIONS, type Classification, type Scope } from '../core/types.js';
import { writeAudit, type RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import { parsePatternKey, toExportRecord } from '../core/types.js';
import type { ClassifyResponse, NdjsonExportRecord } from '../contracts/governance.js';

/**
 * The NDJSON export and pattern classification (docs/behavior.md "Governance").
 * Deletions live in governance-delete.ts, retention in governance-retention.ts.
 */
export const GovernanceAuditKind = {
  ndjsonExported: 'DATA_EXPORTED',
  classified: 'PATTERN_CLASSIFIED',
} as const;

/**
 * `public,internal` → the classifications to export (all when absent or empty); an unknown
 * name is a 422 that names it and the allowed values.
 */
export function parseExportClassifications(raw: string | undefined): Classification[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const { classifications, unknown } = parseClassificationList(raw, CLASSIFICATIONS);
  if (unknown.length > 0 || classifications.length === 0) {
    throw new ValidationError(`unknown classification ${unknown.map((u) => `"${u}"`).join(', ') || '""'}`, [
      { path: 'classification', message: `comma-separated list of ${CLASSIFICATIONS.join(', ')}` },
    ]);
  }
  return classifications;
}

/**
 * GET /v1/governance/export: the scope's patterns as NDJSON lines, oldest first, read from
 * storage page by page (never all at once), so memory stays flat whatever the store holds.
 * The audit event is written when the stream ends, with the number of records sent and
 * whether the stream was complete (a client may hang up half-way).
 */
export async function* exportNdjson(
  deps: ServiceDeps,
  scope: Scope,
  classifications: Classification[] | undefined,
  ctx: RequestContext,
): AsyncGenerator<string> {
  let count = 0;
  let complete = false;
  try {
    const filter = classifications ? { classifications } : undefined;
    for await (const pattern of deps.storage.patterns.iterate(scope, filter)) {
      const record: NdjsonExportRecord = { ...toExportRecord(pattern), tenant_id: scope.tenant_id, project_id: scope.project_id };
      count++;
      yield `${JSON.stringify(record)}\n`;
    }
    complete = true;
  } finally {
    await writeAudit(deps, GovernanceAuditKind.ndjsonExported, scope, ctx, {
      format: 'ndjson',
      count,
      complete,
      classifications: classifications ?? 'all',
    });
  }
}

/**
 * PUT /v1/governance/patterns/{key}/classify: sets the classification in one storage step, so
 * recall and export filters see it on the very next request. Answers the updated record.
 */
export async function classifyPattern(
  deps: ServiceDeps,
  scope: Scope,
  key: string,
  classification: Classification,
  ctx: RequestContext,
): Promise<ClassifyResponse> {
  const id = parsePatternKey(key);
  const before = await deps.storage.patterns.get(scope, id);
  if (!before) throw new NotFoundError(`pattern ${key} not found`);
  const updated = await deps.storage.patterns.classify(scope, id, classification);
  if (!updated) throw new NotFoundError(`pattern ${key} not found`);
  await writeAudit(deps, GovernanceAuditKind.classified, scope, ctx, {
    pattern_key: key,
    from: before.classification,
    to: classification,
  });
  return toExportRecord(updated);
}
