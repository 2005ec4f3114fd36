import { resetDate } from '../core/billing.js';
import { DomainError, EmbeddingUnavailableError, QuotaExceededError, type PartialProgress } from '../core/errors.js';
import { mergeCounts, redactFields, type RedactionCounts } from '../core/redaction.js';
import { sortImportRecords } from '../core/reference-records.js';
import type { ExportRecord, ExportResponse, ImportInput, ImportRecordInput, ImportResponse } from '../contracts/memory.js';
import { parsePatternKey, patternKey, toExportRecord, type PatternRecord, type Scope } from '../core/types.js';
import { storableVector } from '../core/vector.js';
import { auditRedaction, AuditKind, writeAudit, type RequestContext } from './audit.js';
import type { BatchOutcome, TenantPatternQuota } from '../ports/storage.js';
import type { ServiceDeps } from './deps.js';
import { restoreOutcomeLines } from './outcome-transfer.js';
import { restoreEvaluationRunLines } from './evaluation-run-transfer.js';
import { newId } from './ids.js';
import { importStopped } from './import-stopped.js';
import { scopeLocks } from './scope-lock.js';

/** GET /v1/export: every pattern of the scope, oldest first. */
export async function exportRecords(
  deps: ServiceDeps,
  scope: Scope,
  ctx: RequestContext,
): Promise<ExportResponse> {
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
  /** The record's index in the request's records. */
  index: number;
}

/**
 * POST /v1/import: re-embeds tasks in batches, keeps given keys (skipping existing ones
 * unless `overwrite`), redacts like learn does, and counts the result. Records in the
 * reference system's versioned shape are mapped onto ours first; those that cannot be
 * (unknown version, key outside `patterns/`) are skipped and listed with the reason.
 *
 * Whole-request checks come before any write: every key is parsed and the pattern quota is
 * checked for the whole import, so a refusal leaves the store untouched. Each batch is then
 * checked against the key's quota again and written under the scope lock learn holds (so
 * parallel imports and learns never pass it, across server processes too); the plan's quota
 * is checked by the storage in the batch's own atomic write. An import stopped part-way
 * answers with its counts and the last record written (import-stopped.ts).
 */
export async function importRecords(
  deps: ServiceDeps,
  scope: Scope,
  input: ImportInput,
  ctx: RequestContext,
  opts: ImportOptions = {},
): Promise<ImportResponse> {
  const redactionCounts: RedactionCounts = {};
  const total = input.records.length;
  const { importable, rejected } = sortImportRecords<ImportRecordInput>(input.records);
  const rejectedAt = new Set(rejected.map((r) => r.index));
  const indexes = input.records.map((_, i) => i).filter((i) => !rejectedAt.has(i));
  const plan = await planImport(deps, scope, { records: importable, indexes, overwrite: input.overwrite }, redactionCounts, opts);
  const progress: PartialProgress = { imported: 0, skipped: plan.skipped + rejected.length, total, last_written: null };
  const atomic = deps.storage.patterns.writeBatch !== undefined;
  const newPatterns = (writes: PlannedWrite[]) => writes.filter((w) => !w.replace).length;

  let tenantQuota: TenantPatternQuota | null;
  try {
    tenantQuota = await enforceImportQuota(deps, scope, ctx, newPatterns(plan.batches.flat()));
  } catch (err) {
    throw err instanceof DomainError ? err.withProgress(progress) : err;
  }
  for (const writes of plan.batches) {
    // The embedder failing is an outage before this batch's writes: report what is in.
    const vectors = await embedForImport(deps, writes, progress);
    let outcome: BatchOutcome;
    try {
      outcome = await scopeLocks(deps.storage).run(scope, async () => {
        await enforceKeyQuota(deps, scope, ctx, newPatterns(writes));
        return writeBatch(deps, scope, writes, vectors, tenantQuota);
      });
    } catch (err) {
      throw importStopped(err, progress, atomic);
    }
    // Counted from what the write stored, not from the plan: records another run of the same
    // job stored in between are skipped, so the counts add up to what is stored.
    progress.imported += outcome.written;
    progress.skipped += outcome.present;
    const last = writes[writes.length - 1];
    progress.last_written = { index: last.index, key: patternKey(last.record.id) };
  }

  const { imported, skipped } = progress;
  if (Object.keys(redactionCounts).length > 0) await auditRedaction(deps, scope, ctx, redactionCounts, 'import');
  await writeAudit(deps, AuditKind.dataImported, scope, ctx, { imported, skipped, total });
  const result: ImportResponse = { imported, skipped, total };
  if (rejected.length > 0) result.skipped_records = rejected;
  // (+) Outcomes after the patterns they belong to (docs/behavior.md "Outcomes" 6).
  if (input.outcomes !== undefined) result.outcomes_imported = await restoreOutcomeLines(deps, scope, input.outcomes);
  // (+) Evaluation runs under their own ids (docs/behavior.md "Evaluation runs").
  if (input.evaluation_runs !== undefined) {
    const runs = await restoreEvaluationRunLines(deps, scope, input.evaluation_runs);
    result.evaluation_runs_imported = runs.imported;
    result.evaluation_runs_skipped = runs.skipped;
  }
  return result;
}

export interface ImportOptions {
  /**
   * Records without a key get the id `<keyPrefix><index in base 36>` instead of a fresh one,
   * so running the same import again (a job re-run after a crash or a stale takeover) finds
   * them already there instead of storing duplicates. Lower-case letters and
   * digits only; a job's id is one.
   */
  keyPrefix?: string;
}

/** Index width of derived ids: 10,000 records fit in 3 base-36 digits; 4 leave room. */
const DERIVED_INDEX_WIDTH = 4;

/** Every record checked and turned into a planned write (or a skip) before anything is written. */
async function planImport(
  deps: ServiceDeps,
  scope: Scope,
  input: { records: ImportRecordInput[]; indexes: number[]; overwrite: boolean },
  redactionCounts: RedactionCounts,
  opts: ImportOptions,
): Promise<{ batches: PlannedWrite[][]; skipped: number }> {
  const seen = new Set<string>();
  const batches: PlannedWrite[][] = [];
  let skipped = 0;
  const derivedId = (index: number) =>
    opts.keyPrefix === undefined ? null : `${opts.keyPrefix}${index.toString(36).padStart(DERIVED_INDEX_WIDTH, '0')}`;
  for (let start = 0; start < input.records.length; start += IMPORT_BATCH) {
    const batch = input.records.slice(start, start + IMPORT_BATCH);
    const knownIds = batch.map((r, i) => (r.key ? parsePatternKey(r.key, `records.${start + i}.key`) : derivedId(start + i)));
    const lookup = knownIds.filter((id): id is string => id !== null);
    const existing = new Set((await deps.storage.patterns.getMany(scope, lookup)).map((p) => p.id));
    const writes: PlannedWrite[] = [];
    for (const [i, r] of batch.entries()) {
      const id = knownIds[i] ?? newId(deps.clock.now());
      const exists = existing.has(id) || seen.has(id);
      if (exists && !input.overwrite) {
        skipped++;
        continue;
      }
      seen.add(id);
      writes.push({ record: toPatternRecord(deps, id, r, redactionCounts), replace: exists, index: input.indexes[start + i] });
    }
    if (writes.length > 0) batches.push(writes);
  }
  return { batches, skipped };
}

async function embedForImport(deps: ServiceDeps, writes: PlannedWrite[], progress: PartialProgress): Promise<Float32Array[]> {
  try {
    return (await deps.embedder.embed(writes.map((w) => w.record.task))).map(storableVector);
  } catch (err) {
    if (err instanceof DomainError) throw err.withProgress(progress);
    const { imported, total, skipped } = progress;
    throw new EmbeddingUnavailableError(
      `the embedding model is unavailable: ${imported} of ${total} records were written (${skipped} skipped), the rest were not`,
      { cause: err },
    ).withProgress(progress);
  }
}

/**
 * The writes of one batch go out together, so the store can overlap them (PostgreSQL over its
 * pooled connections, the JSON journal with shared fsyncs). A key given twice in one batch is
 * written in record order: the later record replaces the earlier one only once it exists.
 */
async function writeBatch(
  deps: ServiceDeps,
  scope: Scope,
  writes: PlannedWrite[],
  vectors: Float32Array[],
  tenantQuota: TenantPatternQuota | null,
): Promise<BatchOutcome> {
  const { patterns, evals } = deps.storage;
  if (patterns.writeBatch) {
    // Whole batch or nothing of it, where the storage can promise that (both adapters). The
    // tenant's quota is checked again with the batch's inserts: imports and learns in the
    // tenant's other projects may have added patterns since the early check.
    return patterns.writeBatch(scope, writes.map((w, i) => ({ ...w, vector: vectors[i] })), tenantQuota);
  }
  // A storage without atomic batches has only the early check of the tenant's quota.
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
  return { written: writes.length, present: 0 };
}

/**
 * The plan's pattern quota and a key's max_patterns (as in learn) → 429 quota_exceeded before
 * anything is written when the import's new patterns would pass them. Returns the tenant's
 * quota for each batch write to check again.
 */
async function enforceImportQuota(
  deps: ServiceDeps,
  scope: Scope,
  ctx: RequestContext,
  newPatterns: number,
): Promise<TenantPatternQuota | null> {
  const tenantQuota = (await deps.billing?.checkPatterns(scope, newPatterns)) ?? null;
  await enforceKeyQuota(deps, scope, ctx, newPatterns);
  return tenantQuota;
}

/** A key's max_patterns → 429 quota_exceeded when `adding` new patterns would pass it. */
async function enforceKeyQuota(deps: ServiceDeps, scope: Scope, ctx: RequestContext, adding: number): Promise<void> {
  const limit = ctx.max_patterns;
  if (limit === null || limit === undefined || adding === 0) return;
  const current = await deps.storage.patterns.count(scope);
  if (current + adding > limit) throw new QuotaExceededError('patterns', current, limit, resetDate(deps.clock.now()));
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
  let run_id = r.run_id ?? null;
  let author = r.author ?? null;
  let redacted = r.redacted ?? false;
  if (deps.config.redaction) {
    // Every free-text field a caller sends, not only the three big ones.
    const result = redactFields({ task, code, output, run_id, author });
    task = result.fields.task ?? '';
    code = result.fields.code ?? '';
    output = result.fields.output ?? null;
    run_id = result.fields.run_id ?? null;
    author = result.fields.author ?? null;
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
    run_id,
    classification: r.classification ?? 'internal',
    source: r.source ?? 'import',
    author,
    expires_at: r.expires_at ?? null,
    redacted,
    created_at,
    updated_at: r.updated_at ?? created_at,
    // Imported scores were current when exported; decay from the import, not from creation again.
    last_aged_at: now,
  };
}
