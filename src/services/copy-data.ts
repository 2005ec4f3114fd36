import { inBatches } from '../core/batches.js';
import { sameEmbeddingModel } from '../core/embedding-model.js';
import { clusterWithoutNul, patternWithoutNul, withoutNul } from '../core/storable-text.js';
import type { EmbeddingInfo, PatternRecord, Scope } from '../core/types.js';
import { storableVector } from '../core/vector.js';
import type { Embedder } from '../ports/embedder.js';
import type { CopiedPattern, Storage } from '../ports/storage.js';
import { classifyStorageFault } from './storage-faults.js';

/** Patterns handled per round (one embed call when re-embedding). */
const BATCH_SIZE = 64;
/** Eval observations copied per pattern (ranking only reads the last 5; JSON keeps 50). */
const EVALS_COPIED = 50;

export interface CopyOptions {
  /**
   * Used only when the source cannot hand out its vectors (no `patterns.vectors`): every task
   * is embedded again. Lazy, so a model is never loaded when vectors can be copied.
   */
  embedder: () => Promise<Embedder>;
  onProgress?: (done: number, total: number) => void;
}

export interface CopyReport {
  scopes: number;
  /** Patterns written to the target. */
  patterns: number;
  /** Patterns already in the target (a re-run copies only what is missing). */
  skipped: number;
  /** Of those, patterns an interrupted earlier run left without some evaluations or skills, now completed. */
  completed: number;
  /** Scopes whose run counters (metrics) were brought across. */
  metrics: number;
  /** Patterns whose text held NUL characters, which PostgreSQL cannot store: copied without them. */
  nul_stripped: number;
  evals: number;
  skills: number;
  feedback: number;
  /** Evaluation runs copied (with their cases). */
  evaluation_runs: number;
  vectors: 'copied' | 're-embedded';
  embedding: EmbeddingInfo | null;
  /**
   * Patterns the target refuses every time it is asked (storage-faults.ts `refused`), with
   * the target's reason: not copied, and the copy goes on with the rest. A rerun asks again.
   */
  refused: RefusedPattern[];
}

export interface RefusedPattern {
  tenant_id: string;
  project_id: string;
  id: string;
  reason: string;
}

function sameModel(a: EmbeddingInfo, b: EmbeddingInfo): boolean {
  return a.provider === b.provider && sameEmbeddingModel(a, b);
}

/**
 * `recent` is newest first and carries no times: replayed oldest first, a millisecond apart
 * from the pattern's creation, which keeps their order (all ranking needs). The same pattern
 * always gets the same times, so a rerun can tell which observations a target already has.
 */
function evalsToCopy(p: PatternRecord, recentNewestFirst: number[]): { score: number; at: string }[] {
  const base = Date.parse(p.created_at);
  return [...recentNewestFirst].reverse().map((score, i) => ({ score, at: new Date(base + i).toISOString() }));
}

/**
 * `service migrate-data`'s use case, through the Storage and Embedder ports only (src/app.ts
 * opens both storages). Copies the memory of every scope holding patterns from one storage to
 * another: patterns with their vectors, eval observations and skill tags (in one atomic
 * write per batch where the target offers `copyIn`), feedback clusters, the run counters and
 * the embedding info. Resumable and idempotent: patterns whose id already exists in the
 * target scope are not copied again, only completed with what an interrupted run left out.
 * Scopes without any pattern are not discovered (the port lists scopes by pattern).
 */
export async function copyStorage(source: Storage, target: Storage, opts: CopyOptions): Promise<CopyReport> {
  const readVectors = source.patterns.vectors?.bind(source.patterns);
  let embedder: Embedder | null = null;
  let embedding = await source.meta.getEmbeddingInfo();
  if (!readVectors) {
    embedder = await opts.embedder();
    embedding = { ...embedder.info };
  }
  const existing = await target.meta.getEmbeddingInfo();
  if (existing && embedding && !sameModel(existing, embedding) && (await target.patterns.listScopes()).length > 0) {
    throw new Error(
      `the target already holds vectors of ${existing.model} (${existing.dimension}-d), ` +
      `the copy would add ${embedding.model} (${embedding.dimension}-d): use an empty target or run \`service reindex\` first`,
    );
  }

  const scopes = await source.patterns.listScopes();
  let total = 0;
  for (const scope of scopes) total += await source.patterns.count(scope);
  const report: CopyReport = {
    scopes: scopes.length, patterns: 0, skipped: 0, completed: 0, metrics: 0, nul_stripped: 0, evals: 0, skills: 0, feedback: 0, evaluation_runs: 0,
    vectors: readVectors ? 'copied' : 're-embedded', embedding, refused: [],
  };
  opts.onProgress?.(0, total);

  /** A pattern's eval observations as the copy writes them (see evalsToCopy), by id. */
  const historyOf = (p: PatternRecord, recent: Map<string, number[]>) => evalsToCopy(p, recent.get(p.id) ?? []);

  const copyBatch = async (scope: Scope, batch: PatternRecord[]): Promise<void> => {
    const present = new Set((await target.patterns.getMany(scope, batch.map((p) => p.id))).map((p) => p.id));
    const todo = batch.filter((p) => !present.has(p.id));
    const copied = batch.filter((p) => present.has(p.id));
    report.skipped += copied.length;
    const recent = await source.evals.recent(scope, batch.map((p) => p.id), EVALS_COPIED);
    await completeCopied(scope, copied, recent);

    const vectors = await vectorsFor(scope, todo);
    const items: CopiedPattern[] = [];
    for (const p of todo) {
      const vector = vectors.get(p.id);
      if (!vector) throw new Error(`pattern ${p.id} in ${scope.tenant_id}/${scope.project_id} has no stored vector`);
      const { record, changed } = patternWithoutNul(p);
      if (changed) report.nul_stripped += 1;
      // A zero or NaN vector (a task its model reduced to nothing) goes in as zeros.
      items.push({ record, vector: storableVector(vector), evals: historyOf(p, recent), skills: (await source.skills.get(scope, p.id)).map(withoutNul) });
    }
    for (const item of await writeRefusingNone(scope, items)) {
      report.patterns += 1;
      report.evals += item.evals.length;
      if (item.skills.length > 0) report.skills += 1;
    }
    opts.onProgress?.(report.patterns + report.skipped, Math.max(total, report.patterns + report.skipped));
  };

  /**
   * Writes a batch; when the target refuses it for good (not an outage: storage-faults.ts),
   * writes its patterns one by one, so one pattern the target refuses is reported and skipped
   * instead of stopping the copy. An outage or a full disk stops the copy (a rerun resumes).
   * Returns the patterns written.
   */
  const writeRefusingNone = async (scope: Scope, items: CopiedPattern[]): Promise<CopiedPattern[]> => {
    try {
      await writePatterns(scope, items);
      return items;
    } catch (err) {
      if (classifyStorageFault(err) !== 'refused' || items.length === 0) throw err;
    }
    const written: CopiedPattern[] = [];
    for (const item of items) {
      try {
        await writePatterns(scope, [item]);
        written.push(item);
      } catch (err) {
        if (classifyStorageFault(err) !== 'refused') throw err;
        report.refused.push({ ...scope, id: item.record.id, reason: err instanceof Error ? err.message : String(err) });
      }
    }
    return written;
  };

  const writePatterns = async (scope: Scope, items: CopiedPattern[]): Promise<void> => {
    if (target.patterns.copyIn) {
      // Each pattern with its evaluations and skills in one atomic write.
      await target.patterns.copyIn(scope, items);
      return;
    }
    // One write each; a run killed between them is completed by the next (completeCopied).
    for (const item of items) {
      await target.patterns.insert(scope, item.record, item.vector);
      for (const e of item.evals) await target.evals.add(scope, item.record.id, e.score, e.at);
      if (item.skills.length > 0) await target.skills.set(scope, item.record.id, item.skills);
    }
  };

  /**
   * Patterns already in the target: adds what an earlier, interrupted copy left out (the
   * newest eval observations, the skill tags). Observations are copied oldest first, so a
   * target holding k of them holds the first k.
   */
  const completeCopied = async (scope: Scope, copied: PatternRecord[], recent: Map<string, number[]>): Promise<void> => {
    if (copied.length === 0) return;
    const held = await target.evals.recent(scope, copied.map((p) => p.id), EVALS_COPIED);
    for (const p of copied) {
      let completed = false;
      const missing = historyOf(p, recent).slice(held.get(p.id)?.length ?? 0);
      for (const e of missing) {
        await target.evals.add(scope, p.id, e.score, e.at);
        report.evals += 1;
        completed = true;
      }
      const skills = await source.skills.get(scope, p.id);
      if (skills.length > 0 && (await target.skills.get(scope, p.id)).length === 0) {
        await target.skills.set(scope, p.id, skills.map(withoutNul));
        report.skills += 1;
        completed = true;
      }
      if (completed) report.completed += 1;
    }
  };

  const vectorsFor = async (scope: Scope, patterns: PatternRecord[]): Promise<Map<string, Float32Array>> => {
    if (patterns.length === 0) return new Map();
    if (readVectors) return readVectors(scope, patterns.map((p) => p.id));
    const embedded = await embedder!.embed(patterns.map((p) => p.task));
    return new Map(patterns.map((p, i) => [p.id, embedded[i]]));
  };

  for (const scope of scopes) {
    for await (const batch of inBatches(source.patterns.iterate(scope), BATCH_SIZE)) await copyBatch(scope, batch);
    const clusters = await source.feedback.list(scope);
    if (clusters.length > 0) await target.feedback.upsert(scope, clusters.map(clusterWithoutNul));
    report.feedback += clusters.length;
    // The run counters (GET /v1/metrics); raising, not adding, so a rerun counts nothing twice.
    await target.metrics.raiseTo(scope, await source.metrics.get(scope));
    report.metrics += 1;
    report.evaluation_runs += await copyRuns(source, target, scope);
  }
  if (embedding) await target.meta.setEmbeddingInfo(embedding);
  return report;
}

/**
 * The scope's evaluation runs with their cases (docs/behavior.md "Evaluation runs"), oldest
 * first. A run the target already has is left as it is, so a rerun copies nothing twice; a
 * blessing stays behind when the target already has a baseline for that label.
 */
async function copyRuns(source: Storage, target: Storage, scope: Scope): Promise<number> {
  const runs = [];
  for (let before: string | undefined; ;) {
    const page = await source.evaluationRuns.listRuns(scope, { limit: 500, before });
    runs.push(...page);
    if (page.length < 500) break;
    before = page[page.length - 1].id;
  }
  let copied = 0;
  for (const run of runs.reverse()) {
    if (await target.evaluationRuns.getRun(scope, run.id)) continue;
    const taken = run.blessed && run.label !== null && (await target.evaluationRuns.listRuns(scope, { label: run.label, blessed: true, limit: 1 })).length > 0;
    await target.evaluationRuns.putRuns(scope, [{ ...run, blessed: run.blessed && !taken }]);
    for (const c of await source.evaluationRuns.listCases(scope, run.id)) await target.evaluationRuns.putCase(scope, run.id, c);
    copied += 1;
  }
  return copied;
}
