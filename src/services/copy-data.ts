import { inBatches } from '../core/batches.js';
import { sameEmbeddingModel } from '../core/embedding-model.js';
import { clusterWithoutNul, patternWithoutNul, withoutNul } from '../core/storable-text.js';
import type { EmbeddingInfo, PatternRecord, Scope } from '../core/types.js';
import { storableVector } from '../core/vector.js';
import type { Embedder } from '../ports/embedder.js';
import type { Storage } from '../ports/storage.js';

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
  /** Patterns whose text held NUL characters, which PostgreSQL cannot store: copied without them. */
  nul_stripped: number;
  evals: number;
  skills: number;
  feedback: number;
  vectors: 'copied' | 're-embedded';
  embedding: EmbeddingInfo | null;
}

function sameModel(a: EmbeddingInfo, b: EmbeddingInfo): boolean {
  return a.provider === b.provider && sameEmbeddingModel(a, b);
}

/**
 * `service migrate-data`'s use case, through the Storage and Embedder ports only (src/app.ts
 * opens both storages). Copies the memory of every scope holding patterns from one storage to
 * another: patterns with their vectors, eval observations, skill tags and feedback clusters,
 * plus the embedding info. Idempotent: patterns whose id already exists in the target scope
 * are left alone. Scopes without any pattern are not discovered (the port lists scopes by
 * pattern).
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
    scopes: scopes.length, patterns: 0, skipped: 0, nul_stripped: 0, evals: 0, skills: 0, feedback: 0,
    vectors: readVectors ? 'copied' : 're-embedded', embedding,
  };
  opts.onProgress?.(0, total);

  const copyBatch = async (scope: Scope, batch: PatternRecord[]): Promise<void> => {
    const present = new Set((await target.patterns.getMany(scope, batch.map((p) => p.id))).map((p) => p.id));
    const todo = batch.filter((p) => !present.has(p.id));
    report.skipped += batch.length - todo.length;
    const vectors = await vectorsFor(scope, todo);
    const evals = await source.evals.recent(scope, todo.map((p) => p.id), EVALS_COPIED);
    for (const p of todo) {
      const vector = vectors.get(p.id);
      if (!vector) throw new Error(`pattern ${p.id} in ${scope.tenant_id}/${scope.project_id} has no stored vector`);
      const { record, changed } = patternWithoutNul(p);
      if (changed) report.nul_stripped += 1;
      // A zero or NaN vector (a task its model reduced to nothing) goes in as zeros.
      await target.patterns.insert(scope, record, storableVector(vector));
      report.patterns += 1;
      // `recent` is newest first and carries no times: replay oldest first, a millisecond
      // apart from the pattern's creation, which keeps their order (all ranking needs).
      const scores = [...(evals.get(p.id) ?? [])].reverse();
      const base = Date.parse(p.created_at);
      for (const [i, score] of scores.entries()) {
        await target.evals.add(scope, p.id, score, new Date(base + i).toISOString());
        report.evals += 1;
      }
      const skills = await source.skills.get(scope, p.id);
      if (skills.length > 0) {
        await target.skills.set(scope, p.id, skills.map(withoutNul));
        report.skills += 1;
      }
    }
    opts.onProgress?.(report.patterns + report.skipped, Math.max(total, report.patterns + report.skipped));
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
  }
  if (embedding) await target.meta.setEmbeddingInfo(embedding);
  return report;
}
