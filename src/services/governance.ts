import { ValidationError, NotFoundError } from '../core/errors.js';
import { parseClassificationList } from '../core/governance.js';
import { CLASSIFICATIONS, hasFilter, type Classification, type PatternFilter, type Scope } from '../core/types.js';
import { writeAudit, type RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import { outcomeLines } from './outcome-transfer.js';
import { evaluationRunLines } from './evaluation-run-transfer.js';
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
 * The NDJSON export (GET /v1/governance/export, and (+) GET /v1/patterns/export with the
 * listing's filters narrowed to what the caller may browse): the scope's patterns matching
 * `filter` as NDJSON lines, oldest first, read from storage page by page (never all at once),
 * so memory stays flat whatever the store holds. The audit event is written when the stream
 * ends, with the filter, the number of records sent and whether the stream was complete (a
 * client may hang up half-way).
 */
export async function* exportNdjson(
  deps: ServiceDeps,
  scope: Scope,
  filter: PatternFilter | undefined,
  ctx: RequestContext,
  opts: { withOutcomes?: boolean; withEvaluationRuns?: boolean } = {},
): AsyncGenerator<string> {
  let count = 0;
  let complete = false;
  const exported = new Set<string>();
  try {
    for await (const pattern of deps.storage.patterns.iterate(scope, filter)) {
      const record: NdjsonExportRecord = { ...toExportRecord(pattern), tenant_id: scope.tenant_id, project_id: scope.project_id };
      count++;
      if (opts.withOutcomes) exported.add(pattern.id);
      yield `${JSON.stringify(record)}\n`;
    }
    // (+) Then the outcomes reported on the exported patterns (docs/behavior.md "Outcomes" 6).
    if (opts.withOutcomes) for await (const line of outcomeLines(deps, scope, exported)) yield `${JSON.stringify(line)}\n`;
    // (+) Then the evaluation runs with their cases (docs/behavior.md "Evaluation runs"), only in
    // the whole-scope export: runs carry cases' code and no classification to filter them by.
    if (opts.withEvaluationRuns && !hasFilter(filter)) {
      for await (const line of evaluationRunLines(deps, scope)) yield `${JSON.stringify(line)}\n`;
    }
    complete = true;
  } finally {
    const { classifications, ...rest } = filter ?? {};
    await writeAudit(deps, GovernanceAuditKind.ndjsonExported, scope, ctx, {
      format: 'ndjson',
      count,
      complete,
      classifications: classifications ?? 'all',
      ...(hasFilter(rest) ? { filter: rest } : {}),
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
