import { centeredCosine } from './hybrid.js';
import type { OutcomeEvidence, QuantisedVector } from './outcome-types.js';
import { quantiseVector } from './recall-trace.js';

/**
 * Ranking that remembers (docs/behavior.md "Outcome ranking"), the pure part: from the
 * outcomes reported for recall's candidates, each candidate's adjustment to its score, the
 * lessons it carries, and whether it may still be a `duplicate`. No I/O: the service hands
 * over the query's analysis and each candidate's evidence (newest first).
 *
 * - A failure counts only near the query that failed: δ · max over the pattern's failures of
 *   max(0, (c − τ)/(1 − τ)), c the centred cosine of the new query and the failing one. A
 *   pattern that was right for its own problem and failed for a lookalike's wording is not
 *   lowered for its own problem's asks.
 * - The same normalised wording asked before: the newest outcome for it moves the pattern
 *   strongly down (failed) or up (passed). Successes on other wordings raise nothing: a
 *   pattern that passes on its own problem would otherwise climb for its lookalikes too.
 */

/** The lab's defaults: the local failure penalty's weight and its similarity floor. */
export const DEFAULT_OUTCOME_DELTA = 0.3;
export const DEFAULT_OUTCOME_TAU = 0.7;
/**
 * The exact wording's move: more than any blend spread (the blend is in [0, 1], the eval and
 * recency factors at most ×1), so a failure drops the pattern below every alternative and a
 * success lifts it above them.
 */
export const EXACT_WORDING_MOVE = 1;
/** Lessons shown per match. */
export const MAX_LESSONS = 3;
/**
 * The newest failures of a pattern (on other wordings) compared with the query, at most: each
 * comparison is a dot product over the model's dimensions, the bulk of the stage's cost. The
 * exact wording is looked for among all the evidence the storage hands over.
 */
export const MAX_FAILURES_WEIGHED = 8;

export interface OutcomeRankingSettings {
  delta: number;
  tau: number;
}

export const DEFAULT_OUTCOME_RANKING: Readonly<OutcomeRankingSettings> = Object.freeze({
  delta: DEFAULT_OUTCOME_DELTA,
  tau: DEFAULT_OUTCOME_TAU,
});

/**
 * The query as recall analysed it, once per recall. `vector` is in the same space as the traces'
 * vectors (the unit query vector). `centring` (the project's mean figures for this query, as
 * hybrid recall's blend has them) centres the cosine between queries: the earlier query's own
 * mean dot is not kept, so the new query's stands in for it (queries of one project lie at much
 * the same angle to its mean). Null: the raw cosine (small project, or no mean).
 */
export interface OutcomeQuery {
  normalized: string;
  vector: Float32Array | null;
  centring: { queryMeanDot: number; meanNorm2: number } | null;
}

/** A failure the adjustment or a lesson came from (explain lists them). */
export interface OutcomeFailureRef {
  recall_id: string;
  query: string;
  at: string;
  /** Centred cosine of the new query and the failing one (1 for the same wording). */
  similarity: number;
  /** This failure's share of the penalty (0 below τ). */
  penalty: number;
}

/** A failure's detail shown with the match, so an agent sees why it failed before reusing it. */
export interface OutcomeLesson {
  detail: string;
  at: string;
  similarity: number;
  query: string;
}

/** One candidate's outcome part. */
export interface OutcomeAdjustment {
  /** Added to the candidate's score: local + exact. */
  adjustment: number;
  /** −δ · the nearest failure's weight (0 when none is near). */
  local: number;
  /** The newest outcome on this exact wording, if any. */
  exact: 'failed' | 'passed' | null;
  /** −EXACT_WORDING_MOVE, +EXACT_WORDING_MOVE or 0. */
  exact_move: number;
  /** The failures the local part weighed (near ones first, at most MAX_EXPLAINED_FAILURES). */
  failures: OutcomeFailureRef[];
  lessons: OutcomeLesson[];
}

const MAX_EXPLAINED_FAILURES = 5;

/**
 * The outcome part of each candidate that has evidence (candidates without any are absent: their
 * adjustment is 0). `evidence` is per pattern id, newest first, as the storage returns it.
 */
export function outcomeAdjustments(
  query: OutcomeQuery,
  evidence: ReadonlyMap<string, readonly OutcomeEvidence[]>,
  settings: OutcomeRankingSettings = DEFAULT_OUTCOME_RANKING,
): Map<string, OutcomeAdjustment> {
  const out = new Map<string, OutcomeAdjustment>();
  const similarity = querySimilarity(query);
  for (const [id, items] of evidence) {
    if (items.length === 0) continue;
    out.set(id, adjustmentOf(query, items, similarity, settings));
  }
  return out;
}

function adjustmentOf(
  query: OutcomeQuery,
  items: readonly OutcomeEvidence[],
  similarity: (v: QuantisedVector | null) => number,
  settings: OutcomeRankingSettings,
): OutcomeAdjustment {
  let exact: 'failed' | 'passed' | null = null;
  const weighed: (OutcomeFailureRef & { detail: string | null })[] = [];
  let worst = 0;
  let compared = 0;
  for (const e of items) {
    const same = e.query_normalized === query.normalized;
    // Newest first: the first outcome on this wording is its last result.
    if (same && exact === null) exact = e.passed ? 'passed' : 'failed';
    if (e.passed) continue;
    if (!same && compared++ >= MAX_FAILURES_WEIGHED) continue;
    const c = same ? 1 : similarity(e.query_vector);
    // A failure this far from the query neither lowers the pattern nor teaches anything here.
    if (!(c >= settings.tau)) continue;
    const penalty = same ? 0 : failureWeight(c, settings.tau);
    if (penalty > worst) worst = penalty;
    weighed.push({ recall_id: e.recall_id, query: e.query, at: e.at, similarity: c, penalty, detail: e.detail });
  }
  const local = worst > 0 ? -settings.delta * worst : 0;
  const exactMove = exact === 'failed' ? -EXACT_WORDING_MOVE : exact === 'passed' ? EXACT_WORDING_MOVE : 0;
  // Nearest first, then newest (the stable sort keeps the storage's newest-first order).
  const near = weighed.sort((a, b) => b.similarity - a.similarity);
  return {
    adjustment: local + exactMove,
    local,
    exact,
    exact_move: exactMove,
    failures: near.slice(0, MAX_EXPLAINED_FAILURES).map(({ detail: _detail, ...ref }) => ref),
    lessons: near.flatMap((f) => (f.detail ? [{ detail: f.detail, at: f.at, similarity: f.similarity, query: f.query }] : []))
      .slice(0, MAX_LESSONS),
  };
}

/** max(0, (c − τ)/(1 − τ)): 0 up to τ, 1 for the same query. */
export function failureWeight(c: number, tau: number): number {
  if (!(c > tau)) return 0;
  return Math.min(1, (c - tau) / (1 - tau));
}

/** Whether the newest outcome of this exact wording with the pattern failed: then it is never `duplicate` for it. */
export function failedOnThisWording(a: OutcomeAdjustment | undefined): boolean {
  return a?.exact === 'failed';
}

/**
 * The cosine of the query with an earlier query's quantised vector, centred when the analysis
 * says how; 0 without vectors. The query is quantised to int8 once, as the traces' vectors are,
 * so each comparison is an integer dot product (the stage's main cost; exact in int32: at most
 * 127² × dimensions).
 */
export function querySimilarity(query: OutcomeQuery): (v: QuantisedVector | null) => number {
  if (query.vector === null) return () => 0;
  const q = quantiseVector(query.vector).values;
  const qNorm = int8Norm(q);
  const n = q.length;
  const centring = query.centring;
  return (v) => {
    if (v === null || v.values.length !== n || !(qNorm > 0)) return 0;
    const values = v.values;
    // Four running sums: independent additions the CPU can overlap.
    let d0 = 0;
    let d1 = 0;
    let d2 = 0;
    let d3 = 0;
    let i = 0;
    for (; i + 3 < n; i += 4) {
      d0 += q[i] * values[i];
      d1 += q[i + 1] * values[i + 1];
      d2 += q[i + 2] * values[i + 2];
      d3 += q[i + 3] * values[i + 3];
    }
    for (; i < n; i++) d0 += q[i] * values[i];
    // The scales cancel in a cosine: the int8 values are the directions.
    const vNorm = int8Norm(values);
    if (!(vNorm > 0)) return 0;
    const raw = (d0 + d1 + d2 + d3) / (qNorm * vNorm);
    if (centring === null) return Math.max(-1, Math.min(1, raw));
    return centeredCosine(raw, centring.queryMeanDot, centring.queryMeanDot, centring.meanNorm2);
  };
}

/**
 * An int8 vector's length, worked out once per stored vector: every recall that meets the
 * same failure compares with it again (the storages hand out the same arrays).
 */
const norms = new WeakMap<Int8Array, number>();

function int8Norm(values: Int8Array): number {
  let n = norms.get(values);
  if (n === undefined) {
    let vv = 0;
    for (let i = 0; i < values.length; i++) vv += values[i] * values[i];
    n = Math.sqrt(vv);
    norms.set(values, n);
  }
  return n;
}
