import { QuotaExceededError } from '../core/errors.js';
import { mergeCounts, redactFields, type RedactionCounts } from '../core/redaction.js';
import { patternKey, type Classification, type PatternRecord, type Scope, type Source } from '../core/types.js';
import { auditRedaction, AuditKind, writeAudit, type RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import { newId } from './ids.js';
import { firstDayOfNextMonth } from './learn.js';
import { parsePatternKey } from './patterns.js';

/**
 * One exported pattern: every stored field plus governance metadata, addressed by key instead
 * of id; never the vector, and not the internal aging bookmark.
 */
export type ExportRecord = Omit<PatternRecord, 'id' | 'last_aged_at'> & { key: string };

/** Import accepts the export shape; everything but task, code and eval_score is optional. */
export interface ImportRecordInput {
  key?: string;
  task: string;
  code: string;
  output?: string | null;
  eval_score: number;
  success_score?: number;
  reuse_count?: number;
  run_id?: string | null;
  classification?: Classification;
  source?: Source;
  author?: string | null;
  expires_at?: string | null;
  redacted?: boolean;
  created_at?: string;
  updated_at?: string;
}

export function toExportRecord(p: PatternRecord): ExportRecord {
  return {
    key: patternKey(p.id),
    task: p.task,
    code: p.code,
    output: p.output,
    eval_score: p.eval_score,
    success_score: p.success_score,
    reuse_count: p.reuse_count,
    run_id: p.run_id,
    classification: p.classification,
    source: p.source,
    author: p.author,
    expires_at: p.expires_at,
    redacted: p.redacted,
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}

/** GET /v1/export: every pattern of the scope, oldest first. */
export async function exportRecords(
  deps: ServiceDeps,
  scope: Scope,
  ctx: RequestContext,
): Promise<{ records: ExportRecord[]; count: number }> {
  const records: ExportRecord[] = [];
  for await (const p of deps.storage.patterns.iterate(scope)) records.push(toExportRecord(p));
  await writeAudit(deps, AuditKind.dataExported, scope, ctx, { count: records.length, format: 'json' });
  return { records, count: records.length };
}

/** Tasks embedded per model call. */
const IMPORT_BATCH = 64;

interface PlannedWrite {
  record: PatternRecord;
  replace: boolean;
}

/**
 * POST /v1/import: re-embeds tasks in batches, keeps given keys (skipping existing ones
 * unless `overwrite`), redacts like learn does, and counts the result.
 */
export async function importRecords(
  deps: ServiceDeps,
  scope: Scope,
  input: { records: ImportRecordInput[]; overwrite: boolean },
  ctx: RequestContext,
): Promise<{ imported: number; skipped: number; total: number }> {
  const redactionCounts: RedactionCounts = {};
  const seen = new Set<string>();
  let imported = 0;
  let skipped = 0;

  for (let start = 0; start < input.records.length; start += IMPORT_BATCH) {
    const batch = input.records.slice(start, start + IMPORT_BATCH);
    const givenIds = batch.flatMap((r, i) => (r.key ? [parsePatternKey(r.key, `records.${start + i}.key`)] : []));
    const existing = new Set((await deps.storage.patterns.getMany(scope, givenIds)).map((p) => p.id));

    const writes: PlannedWrite[] = [];
    for (const r of batch) {
      const id = r.key ? parsePatternKey(r.key) : newId(deps.clock.now());
      const exists = existing.has(id) || seen.has(id);
      if (exists && !input.overwrite) {
        skipped++;
        continue;
      }
      seen.add(id);
      writes.push({ record: toPatternRecord(deps, id, r, redactionCounts), replace: exists });
    }
    if (writes.length === 0) continue;
    await enforceImportQuota(deps, scope, ctx, writes.filter((w) => !w.replace).length);

    const vectors = await deps.embedder.embed(writes.map((w) => w.record.task));
    await writeBatch(deps, scope, writes, vectors);
    imported += writes.length;
  }

  if (Object.keys(redactionCounts).length > 0) await auditRedaction(deps, scope, ctx, redactionCounts, 'import');
  await writeAudit(deps, AuditKind.dataImported, scope, ctx, { imported, skipped, total: input.records.length });
  return { imported, skipped, total: input.records.length };
}

/**
 * The writes of one batch go out together, so the store can overlap them (PostgreSQL over its
 * pooled connections, the JSON journal with shared fsyncs). A key given twice in one batch is
 * written in record order: the later record replaces the earlier one only once it exists.
 */
async function writeBatch(deps: ServiceDeps, scope: Scope, writes: PlannedWrite[], vectors: Float32Array[]): Promise<void> {
  const { patterns, evals } = deps.storage;
  const lastWriteOf = new Map<string, Promise<void>>();
  await Promise.all(
    writes.map(({ record, replace }, i) => {
      const write = async () => {
        if (replace) {
          await patterns.update(scope, record, vectors[i]);
        } else {
          await patterns.insert(scope, record, vectors[i]);
          await evals.add(scope, record.id, record.eval_score, record.updated_at);
        }
      };
      const done = (lastWriteOf.get(record.id) ?? Promise.resolve()).then(write);
      lastWriteOf.set(record.id, done);
      return done;
    }),
  );
}

/**
 * A key's max_patterns (as in learn) → 429 quota_exceeded before a batch that would pass it.
 * Batches imported before the refusal stay imported; the 429 reports the count they reached.
 */
async function enforceImportQuota(deps: ServiceDeps, scope: Scope, ctx: RequestContext, newPatterns: number): Promise<void> {
  await deps.billing?.checkPatterns(scope, newPatterns);
  const limit = ctx.max_patterns;
  if (limit === null || limit === undefined || newPatterns === 0) return;
  const current = await deps.storage.patterns.count(scope);
  if (current + newPatterns > limit) throw new QuotaExceededError('patterns', current, limit, firstDayOfNextMonth(deps.clock.now()));
}

function toPatternRecord(
  deps: ServiceDeps,
  id: string,
  r: ImportRecordInput,
  redactionCounts: RedactionCounts,
): PatternRecord {
  const now = deps.clock.now().toISOString();
  let task = r.task;
  let code = r.code;
  let output = r.output ?? null;
  let redacted = r.redacted ?? false;
  if (deps.config.redaction) {
    const result = redactFields({ task, code, output });
    task = result.fields.task ?? '';
    code = result.fields.code ?? '';
    output = result.fields.output ?? null;
    if (result.redacted) {
      redacted = true;
      mergeCounts(redactionCounts, result.counts);
    }
  }
  const created_at = r.created_at ?? now;
  return {
    id,
    task,
    code,
    output,
    eval_score: r.eval_score,
    success_score: r.success_score ?? r.eval_score,
    reuse_count: r.reuse_count ?? 0,
    run_id: r.run_id ?? null,
    classification: r.classification ?? 'internal',
    source: r.source ?? 'import',
    author: r.author ?? null,
    expires_at: r.expires_at ?? null,
    redacted,
    created_at,
    updated_at: r.updated_at ?? created_at,
    // Imported scores were current when exported; decay from the import, not from creation again.
    last_aged_at: now,
  };
}
