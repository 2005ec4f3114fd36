import { Bm25Scorer, type Bm25Stats } from './bm25.js';
import { residualCosine, type ComponentRemoval } from './components.js';
import { ngramSimilarity, ngramSketch } from './ngrams.js';
import type { PatternFilter, RecallCandidate } from './types.js';

/**
 * Hybrid ranking, the pure part (docs/behavior.md "Recall" 2–3). The storage hands over the
 * union of its vector and keyword candidates with two dot products each; everything that
 * decides the order is computed here, so both storages rank alike.
 *
 * - Mean-centring: static embeddings share a large common direction (every task "looks like"
 *   every other). Subtracting the project's mean unit vector before the cosine removes it.
 *   With q, d unit vectors and m the mean: cos(q − m, d − m) =
 *   (q·d − q·m − d·m + m·m) / √((1 − 2 q·m + m·m)(1 − 2 d·m + m·m)), so the storage needs only
 *   q·d (the cosine it already computes) and d·m per candidate.
 * - Below MIN_CENTERING_PATTERNS the mean is mostly the few patterns themselves; centring
 *   would erase them, so the raw cosine stands in for the centred one.
 * - BM25 and the centred cosine are on different scales: each is min-max normalised over the
 *   candidates of this query, then blended linearly.
 */
export const MIN_CENTERING_PATTERNS = 20;
/** Default share of the vector side in the blend (SERVICE_RECALL_VECTOR_WEIGHT); measured on CoNaLa, bench --recall-quality. */
export const DEFAULT_VECTOR_WEIGHT = 0.65;

/** What hybrid recall asks the storage for. */
export interface HybridQuery {
  /** The query's unit vector; null: keyword candidates only. */
  vector: Float32Array | null;
  /** The query's distinct terms (core/bm25.ts distinctTerms). */
  terms: string[];
  vectorK: number;
  keywordK: number;
  filter?: PatternFilter;
  /** Newest eval observations per candidate (0: none). */
  evalWindow: number;
  /** The code field's weight in the keyword candidates' BM25F (absent or 0: task text alone). */
  codeWeight?: number;
  /**
   * The project's principal directions removed for ranking (core/components.ts): the storage
   * returns each candidate's unit vector · each direction, and the mean's (absent: none).
   */
  directions?: Float32Array[];
}

/** The ranking's optional parts beside the two weights: the principal directions' removal and the n-gram side score. */
export interface RankingExtras {
  removal?: ComponentRemoval | null;
  /** The character n-gram side score's weight (0 or absent: off). */
  ngramWeight?: number;
  /** The query's text, for its n-grams (absent: its terms, space-separated). */
  queryText?: string;
}

/** A candidate as the storage returns it for hybrid recall. */
export interface HybridCandidate extends RecallCandidate {
  /** Raw cosine of query and pattern (unclamped; 0 when either has no vector). */
  cosine: number;
  /** The pattern's unit vector · the project's mean vector (null: no vector, or no mean). */
  mean_dot: number | null;
  /** The code's keyword terms as one text (core/code-terms.ts codeTermText; '' for no code). */
  code_terms: string;
  /** The unit vector · each of the query's `directions` (null: no vector or no directions asked). */
  direction_dots?: number[] | null;
}

/**
 * Project-level figures the storage keeps incrementally (per project, whatever the filter).
 * The mean m itself never leaves the storage: centring needs only q·m and m·m.
 */
export interface ProjectRecallStats extends Bm25Stats {
  /** Patterns whose unit vectors (of the query's dimension) make up the mean. */
  vectors: number;
  /** Unit query · mean (null: no query vector or no mean). */
  query_mean_dot: number | null;
  /** Mean · mean (null: no mean). */
  mean_norm2: number | null;
  /** Mean · each of the query's `directions` (null or absent: none asked, or no mean). */
  mean_direction_dots?: number[] | null;
}

export interface HybridCandidateSet {
  candidates: HybridCandidate[];
  stats: ProjectRecallStats;
}

/** What the blend produced for one candidate (explain shows these). */
export interface HybridParts {
  /** The centred cosine (the tiers' input, whatever the ranking used). */
  centered_cosine: number;
  /** The vector side as ranked: the centred cosine with the project's principal directions removed (else the centred cosine). */
  residual_cosine: number;
  /** BM25F over task and code (plain BM25 of the task when the code weight is 0). */
  bm25: number;
  /** What the code field added to `bm25`. */
  code_bm25: number;
  /** The character n-gram similarity of query and task (0 when the side score is off). */
  ngram: number;
  blended: number;
}

export type BlendedCandidate = HybridCandidate & HybridParts;

/** Dot product in double precision. */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** A unit-length copy (all zeros for a zero or non-finite vector). */
export function unitVector(v: Float32Array): Float32Array {
  const n = Math.sqrt(dot(v, v));
  const out = new Float32Array(v.length);
  if (!(n > 0) || !Number.isFinite(n)) return out;
  for (let i = 0; i < v.length; i++) out[i] = v[i] / n;
  return out;
}

/** The mean of `count` unit vectors whose sum is `sum` (null when there are none). */
export function meanOf(sum: ArrayLike<number>, count: number): Float32Array | null {
  if (!(count > 0)) return null;
  const out = new Float32Array(sum.length);
  for (let i = 0; i < sum.length; i++) out[i] = sum[i] / count;
  return out;
}

/** cos(q − m, d − m) from q·d, q·m, d·m and m·m (q, d unit vectors); 0 when either side vanishes. */
export function centeredCosine(qd: number, qm: number, dm: number, mm: number): number {
  const qq = 1 - 2 * qm + mm;
  const dd = 1 - 2 * dm + mm;
  if (!(qq > 1e-12) || !(dd > 1e-12)) return 0;
  const c = (qd - qm - dm + mm) / Math.sqrt(qq * dd);
  return Math.max(-1, Math.min(1, c));
}

/** Whether the project is large enough for its mean to be subtracted. */
export function centeringApplies(stats: Pick<ProjectRecallStats, 'query_mean_dot' | 'mean_norm2' | 'vectors'>): boolean {
  return stats.query_mean_dot !== null && stats.mean_norm2 !== null && stats.vectors >= MIN_CENTERING_PATTERNS;
}

/**
 * Min-max over the values with the floor at 0 at most: the best becomes 1, 0 (no shared
 * word, no centred similarity) or the lowest value below it becomes 0. A floor at the worst
 * candidate instead would give the last of every list 0 on both sides, and no eval or recency
 * factor, which multiply the blend, could ever lift it. When all are equal there is no spread
 * to normalise: positive values all count as 1, the rest as 0.
 */
export function minMaxNormalise(values: readonly number[]): number[] {
  if (values.length === 0) return [];
  let lo = 0;
  let hi = -Infinity;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!(hi > lo)) return values.map(() => (hi > 0 ? 1 : 0));
  return values.map((v) => (v - lo) / (hi - lo));
}

/** weight × vector side + (1 − weight) × keyword side, both already normalised to [0, 1]. */
export function blend(vectorPart: number, keywordPart: number, vectorWeight: number): number {
  return vectorWeight * vectorPart + (1 - vectorWeight) * keywordPart;
}

/** What scoring one candidate needs, fixed per query (the per-candidate steps of blendCandidates). */
export interface BlendPlan {
  /** The centred cosine (raw for a small project; 0 without a query vector). */
  centred(c: HybridCandidate): number;
  /** The vector side as blended: `centred` with the principal directions removed when they apply, else `centred`. */
  vector(c: HybridCandidate): number;
  /** The keyword side: BM25F of the candidate's task and code terms. */
  keyword(c: HybridCandidate): number;
  /** What the code field added to the last `keyword` answer. */
  lastCodeShare(): number;
  /** The n-gram side: the candidate task's character n-gram similarity to the query (0 when off). */
  ngram(c: HybridCandidate): number;
  ngramWeight: number;
  /** The vector side's share in the blend (0 without a query vector). */
  weight: number;
}

export function blendPlan(
  set: HybridCandidateSet,
  queryUnit: Float32Array | null,
  queryTerms: readonly string[],
  vectorWeight: number,
  codeWeight = 0,
  extras: RankingExtras = {},
): BlendPlan {
  const removal = extras.removal ?? null;
  const ngramWeight = extras.ngramWeight ?? 0;
  const querySketch = ngramWeight > 0 ? ngramSketch(extras.queryText ?? queryTerms.join(' ')) : null;
  const { stats } = set;
  const centre = queryUnit !== null && centeringApplies(stats);
  const qm = stats.query_mean_dot ?? 0;
  const mm = stats.mean_norm2 ?? 0;
  const scorer = new Bm25Scorer(queryTerms, stats, codeWeight);
  const mu = stats.mean_direction_dots ?? null;
  // Removal needs the centring it refines, and the storage's dots for the same directions.
  const removing = centre && removal !== null && removal.directions.length > 0 && mu !== null && mu.length === removal.directions.length;
  const qu = removing ? removal!.directions.map((u) => dot(queryUnit!, u)) : [];
  const centred = (c: HybridCandidate) => {
    if (queryUnit === null) return 0;
    // A pattern with no vector has cosine 0: unrelated by meaning, centred or not.
    if (!centre || c.mean_dot === null) return c.cosine;
    return centeredCosine(c.cosine, qm, c.mean_dot, mm);
  };
  return {
    centred,
    vector: removing
      ? (c) => (c.mean_dot === null || !c.direction_dots || c.direction_dots.length !== qu.length
        ? centred(c) : residualCosine(c.cosine, qm, c.mean_dot, mm, qu, c.direction_dots, mu!))
      : centred,
    keyword: (c) => scorer.score(c.task, c.code_terms),
    lastCodeShare: () => scorer.lastCodeShare,
    ngram: querySketch ? (c) => ngramSimilarity(querySketch, ngramSketch(c.task)) : () => 0,
    ngramWeight: querySketch ? ngramWeight : 0,
    // The lower vector weight goes with the removal only (without it, the low-overlap tasks lose).
    weight: queryUnit === null ? 0 : removing ? removal!.vectorWeight : vectorWeight,
  };
}

/** Every candidate's raw sides and their per-query normalisations (index: the candidate's). */
export interface BlendSides {
  /** The n-gram side, raw and normalised (empty when off). */
  ngram?: number[];
  ngramNorm?: number[];
  centred: number[];
  /** The vector side as blended (BlendPlan.vector). */
  vector: number[];
  keyword: number[];
  codeShare: number[];
  vectorNorm: number[];
  keywordNorm: number[];
}

/** Candidate i with its blend parts, given every candidate's raw sides and their normalisations. */
export function withBlend(
  c: HybridCandidate, i: number, sides: BlendSides, weight: number, ngramWeight = 0,
): BlendedCandidate {
  // Written field by field: an object spread of each of some 40 candidates per recall cost
  // more than the whole blend's arithmetic. A field added to HybridCandidate must be added here
  // (the compiler asks for a required one, not an optional one).
  return {
    id: c.id,
    task: c.task,
    similarity: c.similarity,
    recent_evals: c.recent_evals,
    updated_at: c.updated_at,
    cosine: c.cosine,
    mean_dot: c.mean_dot,
    code_terms: c.code_terms,
    direction_dots: c.direction_dots,
    centered_cosine: sides.centred[i],
    residual_cosine: sides.vector[i],
    bm25: sides.keyword[i],
    code_bm25: sides.codeShare[i],
    ngram: sides.ngram?.[i] ?? 0,
    // The n-gram side score is added on top of the two-sided blend.
    blended: blend(sides.vectorNorm[i], sides.keywordNorm[i], weight) + (ngramWeight > 0 ? ngramWeight * sides.ngramNorm![i] : 0),
  };
}

/**
 * Scores every candidate: the centred cosine (or the raw one for a small project; candidates
 * with no vector score 0), BM25F of its task text and code terms (`codeWeight` 0: the task alone), and the blend of the two after
 * per-query min-max normalisation. `queryUnit` null (the embedder is down) leaves BM25 alone.
 * Recall runs the same steps in slices (services/recall-hybrid.ts).
 */
export function blendCandidates(
  set: HybridCandidateSet,
  queryUnit: Float32Array | null,
  queryTerms: readonly string[],
  vectorWeight: number,
  codeWeight = 0,
  extras: RankingExtras = {},
): BlendedCandidate[] {
  const plan = blendPlan(set, queryUnit, queryTerms, vectorWeight, codeWeight, extras);
  const centred = set.candidates.map((c) => plan.centred(c));
  const vector = set.candidates.map((c) => plan.vector(c));
  const codeShare: number[] = [];
  const keyword = set.candidates.map((c) => {
    const score = plan.keyword(c);
    codeShare.push(plan.lastCodeShare());
    return score;
  });
  const ngram = plan.ngramWeight > 0 ? set.candidates.map((c) => plan.ngram(c)) : undefined;
  const sides = {
    centred, vector, keyword, codeShare, vectorNorm: minMaxNormalise(vector), keywordNorm: minMaxNormalise(keyword),
    ngram, ngramNorm: ngram ? minMaxNormalise(ngram) : undefined,
  };
  return set.candidates.map((c, i) => withBlend(c, i, sides, plan.weight, plan.ngramWeight));
}
