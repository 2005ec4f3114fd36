import { DEDUP_JACCARD_THRESHOLD, dedupeByTask } from './dedup.js';
import { qualityFactor } from './quality.js';
import { recencyFactor, type RecencyOptions } from './recency.js';
import type { RecallCandidate } from './types.js';

export interface RankedCandidate extends RecallCandidate {
  /** The ranking value: base × quality factor when eval-weighted; × recency factor ^ weight. */
  score: number;
  /** The base the factors multiply: the hybrid blend when present, else the similarity. */
  base: number;
  /** 1 when not eval-weighted. */
  eval_factor: number;
  /** factor ^ weight; 1 when recency is off. */
  recency_factor: number;
  /** (+) What reported outcomes added to the score (docs/behavior.md "Outcome ranking"); absent: nothing. */
  outcome?: number;
}

export interface RankOptions {
  evalWeighted: boolean;
  deduplicate: boolean;
  /** Survivors the caller will look at (its page plus one, for has_more): dedup stops there. */
  keep: number;
  /** Recency weighting (absent, or weight 0: none). */
  recency?: RecencyOptions;
  /**
   * (+) Per candidate id, what reported outcomes add to its score (core/outcome-ranking.ts),
   * before dedup, so a demoted pattern's passing near-duplicate can take its place.
   */
  outcome?: ReadonlyMap<string, number>;
}

/**
 * Recall's ranking (docs/behavior.md "Recall" 3-4): score each candidate, order by score (equal
 * scores by `tiebreak` when given, then by the smaller id), then collapse near-duplicate tasks,
 * keeping the best-ranked member of each group. The base is the hybrid blend (`blended`) when
 * the candidate has one, else its similarity. Recency applies before dedup, so of two
 * near-duplicates the fresher one can win; tiers are never derived from the score.
 */
export function rankCandidates<T extends RecallCandidate & { blended?: number }>(
  candidates: T[],
  opts: RankOptions,
  tiebreak?: (a: T, b: T) => number,
): (T & RankedCandidate)[] {
  const ranked = candidates.map((c) => scoreCandidate(c, opts));
  ranked.sort(tiebreak ? (a, b) => b.score - a.score || tiebreak(a, b) || byId(a, b) : byScore);
  return opts.deduplicate ? dedupeByTask(ranked, (r) => r.task, DEDUP_JACCARD_THRESHOLD, opts.keep, codeTermsOf) : ranked;
}

/** One candidate with its ranking value and factors (rankCandidates' per-candidate step). */
export function scoreCandidate<T extends RecallCandidate & { blended?: number }>(
  c: T,
  opts: Pick<RankOptions, 'evalWeighted' | 'recency' | 'outcome'>,
): T & RankedCandidate {
  const base = baseOf(c);
  const evalFactor = evalFactorOf(c, opts);
  const recency = recencyOf(c, opts);
  // Object.assign, then the new fields, is the spread `{ ...c, base, … }` without its cost:
  // on Node 20 a literal that adds fields after a spread takes a slow path, some 7 µs per
  // candidate on the reference box, most of a hybrid recall's ranking (bench --recall-cpu).
  const out = Object.assign({}, c) as T & RankedCandidate;
  out.base = base;
  out.eval_factor = evalFactor;
  out.recency_factor = recency;
  out.score = base * evalFactor * recency;
  const outcome = opts.outcome?.get(c.id);
  if (outcome !== undefined) {
    out.outcome = outcome;
    out.score += outcome;
  }
  return out;
}

/**
 * scoreCandidate's score alone, the same number (the same factors multiplied in the same
 * order), without the copy: a ranking that needs the page plus one scores every candidate
 * but copies only those it reaches.
 */
export function candidateScore(c: RecallCandidate & { blended?: number }, opts: Pick<RankOptions, 'evalWeighted' | 'recency' | 'outcome'>): number {
  return baseOf(c) * evalFactorOf(c, opts) * recencyOf(c, opts) + (opts.outcome?.get(c.id) ?? 0);
}

function baseOf(c: RecallCandidate & { blended?: number }): number {
  return c.blended ?? c.similarity;
}

function evalFactorOf(c: RecallCandidate, opts: Pick<RankOptions, 'evalWeighted'>): number {
  return opts.evalWeighted ? qualityFactor(c.recent_evals) : 1;
}

function recencyOf(c: RecallCandidate, opts: Pick<RankOptions, 'recency'>): number {
  return opts.recency && opts.recency.weight > 0
    ? recencyFactor(c.updated_at, opts.recency.now, opts.recency.halfLifeDays) ** opts.recency.weight
    : 1;
}

/** A hybrid candidate's code terms (core/hybrid.ts code_terms), which dedup compares too; undefined for any other. */
export function codeTermsOf(c: object): string | undefined {
  const code = (c as { code_terms?: unknown }).code_terms;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Ranking order: higher score first, equal scores by the smaller id. The one tie rule of recall
 * on every storage (docs/behavior.md "Recall" 3): whatever order the candidates came in, so
 * dedup keeps the smaller id of equal tasks at equal score.
 */
export function byScore(a: { score: number; id: string }, b: { score: number; id: string }): number {
  return b.score - a.score || byId(a, b);
}

/** The smaller id first (ids are time-ordered: the older pattern). */
export function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
