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
 * Exact integer dot products of an int8 query with int8 rows of its length: `out[i]` = Σ
 * query·rows[i] for i < count (exact: at most 127² × dimensions, far below 2²⁴). The service
 * hands over a SIMD kernel (adapters/storage/json/engine/query-dots.ts); without one, plain JavaScript gives the
 * same integers.
 */
export type QueryDots = (query: Int8Array, rows: readonly Int8Array[], count: number, out: Float64Array) => void;

export const jsQueryDots: QueryDots = (query, rows, count, out) => {
  const n = query.length;
  for (let r = 0; r < count; r++) out[r] = int8Dot(query, rows[r], n);
};

/**
 * The outcome part of each candidate that has evidence (candidates without any are absent: their
 * adjustment is 0). `evidence` is per pattern id, newest first, as the storage returns it.
 * Every comparison the candidates need is made in one batch (`dots`), before any candidate's
 * part is put together: the per-comparison overhead of a kernel call is paid once per recall.
 */
export function outcomeAdjustments(
  query: OutcomeQuery,
  evidence: ReadonlyMap<string, readonly OutcomeEvidence[]>,
  settings: OutcomeRankingSettings = DEFAULT_OUTCOME_RANKING,
  dots: QueryDots = jsQueryDots,
): Map<string, OutcomeAdjustment> {
  const out = new Map<string, OutcomeAdjustment>();
  const compare = new QueryComparison(query);
  for (const items of evidence.values()) compare.plan(items, query.normalized);
  compare.run(dots);
  for (const [id, items] of evidence) {
    if (items.length === 0) continue;
    out.set(id, adjustmentOf(query, items, compare, settings));
  }
  return out;
}

function adjustmentOf(
  query: OutcomeQuery,
  items: readonly OutcomeEvidence[],
  compare: QueryComparison,
  settings: OutcomeRankingSettings,
): OutcomeAdjustment {
  let exact: 'failed' | 'passed' | null = null;
  let weighed: (OutcomeFailureRef & { detail: string | null })[] | null = null;
  let worst = 0;
  let compared = 0;
  for (const e of items) {
    const same = e.query_normalized === query.normalized;
    // Newest first: the first outcome on this wording is its last result.
    if (same && exact === null) exact = e.passed ? 'passed' : 'failed';
    if (e.passed) continue;
    // The same failures QueryComparison.plan planned the comparisons for.
    if (!same && compared++ >= MAX_FAILURES_WEIGHED) continue;
    const c = same ? 1 : compare.similarity(e.query_vector);
    // A failure this far from the query neither lowers the pattern nor teaches anything here.
    if (!(c >= settings.tau)) continue;
    const penalty = same ? 0 : failureWeight(c, settings.tau);
    if (penalty > worst) worst = penalty;
    (weighed ??= []).push({ recall_id: e.recall_id, query: e.query, at: e.at, similarity: c, penalty, detail: e.detail });
  }
  const local = worst > 0 ? -settings.delta * worst : 0;
  const exactMove = exact === 'failed' ? -EXACT_WORDING_MOVE : exact === 'passed' ? EXACT_WORDING_MOVE : 0;
  if (weighed === null) return { adjustment: local + exactMove, local, exact, exact_move: exactMove, failures: [], lessons: [] };
  // Nearest first, then newest (the stable sort keeps the storage's newest-first order).
  const near = weighed.length > 1 ? weighed.sort((a, b) => b.similarity - a.similarity) : weighed;
  const failures: OutcomeFailureRef[] = [];
  const lessons: OutcomeLesson[] = [];
  // Plain loops and literals: this runs for every candidate with outcomes on every recall.
  for (const f of near) {
    if (failures.length < MAX_EXPLAINED_FAILURES) {
      failures.push({ recall_id: f.recall_id, query: f.query, at: f.at, similarity: f.similarity, penalty: f.penalty });
    }
    if (f.detail && lessons.length < MAX_LESSONS) lessons.push({ detail: f.detail, at: f.at, similarity: f.similarity, query: f.query });
  }
  return { adjustment: local + exactMove, local, exact, exact_move: exactMove, failures, lessons };
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
  const compare = new QueryComparison(query);
  return (v) => compare.cosine(v, compare.comparable(v) ? int8Dot(compare.quantised(), v!.values, v!.values.length) : 0);
}

/**
 * The comparisons of one recall's query: planned (the vectors to compare), run in one batch,
 * then read back per vector. A vector met twice is compared once; the query is quantised only
 * when some failure is to be compared with it.
 */
class QueryComparison {
  private q: Int8Array | null = null;
  private qNorm = 0;
  private readonly vector: Float32Array | null;
  private readonly centring: OutcomeQuery['centring'];
  private readonly rows: Int8Array[] = [];
  private readonly index = new Map<Int8Array, number>();
  private results: Float64Array | null = null;

  constructor(query: OutcomeQuery) {
    this.vector = query.vector;
    this.centring = query.centring;
  }

  /** The query in int8, as the traces' vectors are. */
  quantised(): Int8Array {
    if (this.q === null) {
      this.q = quantiseVector(this.vector!).values;
      // Not kept in the norms' cache: a query is compared in this recall only.
      let qq = 0;
      for (let i = 0; i < this.q.length; i++) qq += this.q[i] * this.q[i];
      this.qNorm = Math.sqrt(qq);
    }
    return this.q;
  }

  /** Whether `v` is compared at all (else its similarity is 0). */
  comparable(v: QuantisedVector | null): boolean {
    if (this.vector === null || v === null || v.values.length !== this.vector.length) return false;
    this.quantised();
    return this.qNorm > 0;
  }

  plan(items: readonly OutcomeEvidence[], normalized: string): void {
    if (this.vector === null) return;
    // The failures adjustmentOf compares: the newest MAX_FAILURES_WEIGHED on other wordings.
    let compared = 0;
    for (const e of items) {
      if (e.passed || e.query_normalized === normalized) continue;
      if (compared++ >= MAX_FAILURES_WEIGHED) continue;
      const v = e.query_vector;
      if (!this.comparable(v) || this.index.has(v!.values)) continue;
      this.index.set(v!.values, this.rows.length);
      this.rows.push(v!.values);
    }
  }

  run(dots: QueryDots): void {
    if (this.rows.length === 0) return;
    this.results = new Float64Array(this.rows.length);
    dots(this.q!, this.rows, this.rows.length, this.results);
  }

  similarity(v: QuantisedVector | null): number {
    if (!this.comparable(v)) return 0;
    const at = this.index.get(v!.values);
    // Planned vectors were compared in the batch; any other (none, as planned) directly.
    const dot = at !== undefined && this.results !== null ? this.results[at] : int8Dot(this.q!, v!.values, v!.values.length);
    return this.cosine(v, dot);
  }

  /** The (centred) cosine from the integer dot product with `v`. */
  cosine(v: QuantisedVector | null, dot: number): number {
    if (!this.comparable(v)) return 0;
    // The scales cancel in a cosine: the int8 values are the directions.
    const vNorm = int8Norm(v!.values);
    if (!(vNorm > 0)) return 0;
    const raw = dot / (this.qNorm * vNorm);
    if (this.centring === null) return Math.max(-1, Math.min(1, raw));
    return centeredCosine(raw, this.centring.queryMeanDot, this.centring.queryMeanDot, this.centring.meanNorm2);
  }
}

function int8Dot(q: Int8Array, values: Int8Array, n: number): number {
  // Four running sums: independent additions the CPU can overlap (integers: the order changes nothing).
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
  return d0 + d1 + d2 + d3;
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
