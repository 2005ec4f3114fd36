import { distinctTerms } from '../core/bm25.js';
import {
  blendCandidates, blendPlan, minMaxNormalise, withBlend, type BlendedCandidate, type HybridCandidateSet,
} from '../core/hybrid.js';
import type { ComponentRemoval } from '../core/components.js';
import type { RankingExtras } from '../core/hybrid.js';
import { QUALITY_WINDOW } from '../core/quality.js';
import { firstFetch, widenedFetch } from '../core/dedup.js';
import type { RankedCandidate, RankOptions } from '../core/ranking.js';
import type { WorkBudget } from '../core/slices.js';
import { jaccardOfSets, tokenSet } from '../core/text.js';
import type { PatternFilter, Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';
import { rankInSlices, recallBudget } from './recall-dedup.js';
import type { OutcomeStage } from './recall-outcomes.js';
import { currentRemoval, removalFor } from './recall-components.js';

/** A ranked hybrid candidate: the blend's parts and the ranking's factors. */
export type HybridRanked = BlendedCandidate & RankedCandidate;

export interface HybridRanking {
  ranked: HybridRanked[];
  /** Patterns in the project (the tier policy's fit depends on it). */
  docs: number;
}

/**
 * Hybrid recall (docs/behavior.md "Recall" 2–4). Candidate gathering and re-scoring are kept
 * apart: `gather` asks the storage for the union of vector and keyword candidates, then they
 * are blended and ranked (core/hybrid.ts and core/ranking.ts, in slices of bounded work so the
 * event loop is never held long). Widens both sides while the page is short
 * after dedup and either side may have more. `unit` null: keyword side alone.
 */
export async function hybridRanking(
  deps: ServiceDeps,
  scope: Scope,
  task: string,
  unit: Float32Array | null,
  filter: PatternFilter,
  need: number,
  evalWeighted: boolean,
  ranking: RankOptions,
  outcomes: OutcomeStage | null = null,
): Promise<HybridRanking> {
  const terms = distinctTerms(task);
  const first = firstFetch(need);
  const budget = recallBudget();
  const { vectorWeight, codeWeight, ngramWeight } = deps.config.recall.ranking;
  let removal = unit ? currentRemoval(deps, scope) : null;
  for (let k = first; ;) {
    const ask = () => gather(deps, scope, unit, terms, k, filter, evalWeighted ? QUALITY_WINDOW : 0, codeWeight, removal);
    let set = await ask();
    if (unit && k === first) {
      // The project's size is known now: its principal directions (the first fit awaited, then asked again with them).
      const fitted = await removalFor(deps, scope, set.stats.docs);
      if (fitted !== null && removal === null) {
        removal = fitted;
        set = await ask();
      }
    }
    // Either side filling its k means that side may hold more: widen both.
    const blended = await blendInSlices(set, task, unit, terms, vectorWeight, budget, codeWeight, { removal, ngramWeight });
    // Outcomes adjust the scores before dedup (docs/behavior.md "Outcome ranking"; services/recall-outcomes.ts).
    const outcome = outcomes ? await outcomes.adjust(blended.map((c) => c.id), unit, set.stats) : undefined;
    const ranked = await rankInSlices(blended, outcome ? { ...ranking, outcome } : ranking, budget, blendOrder);
    // A union smaller than k means neither side filled its k: the scope has nothing more. The
    // widening stops at core/dedup.ts's cap, as cosine ranking's does.
    const wider = set.candidates.length < keywordShare(k) || ranked.length > need ? null : widenedFetch(k, first);
    if (wider === null) return { ranked, docs: set.stats.docs };
    k = wider;
  }
}

/**
 * The keyword side fetches half the vector side's k (at least KEYWORD_MIN_FETCH): BM25's best
 * few are what the blend lifts; its long tail of single shared words rarely wins, and every
 * candidate costs a re-score (on PostgreSQL, a pattern row read with its cosine and evals).
 * Measured with `npm run bench -- --recall-quality`: a default recall's 10 keyword candidates
 * instead of 20 kept CoNaLa's precision@1 (61.5 %) and the calibration set's figures; p@5
 * 71.7 → 71.5 %, and the PostgreSQL statement 8 % cheaper. Without a vector the keyword side
 * gets the whole k.
 */
const KEYWORD_MIN_FETCH = 10;

export function keywordShare(k: number): number {
  return Math.max(KEYWORD_MIN_FETCH, Math.ceil(k / 2));
}

function gather(
  deps: ServiceDeps, scope: Scope, unit: Float32Array | null, terms: string[], k: number, filter: PatternFilter, evalWindow: number,
  codeWeight: number, removal: ComponentRemoval | null,
): Promise<HybridCandidateSet> {
  const keywordK = unit ? keywordShare(k) : k;
  const query = { vector: unit, terms, vectorK: unit ? k : 0, keywordK, filter, evalWindow, codeWeight };
  return deps.storage.patterns.hybridCandidates(scope, removal ? { ...query, directions: removal.directions } : query);
}

/**
 * The blend, candidates in a fixed order (blend, then cosine, then id), so ranking's stable
 * sort gives the same order whatever order the storage returned them in. Without a query
 * vector the wire's similarity is token overlap (Jaccard), as before. Recall runs the same
 * steps in slices (blendInSlices, ranked with blendOrder as the tiebreak); this is the
 * reference the storage contract ranks with.
 */
export function rescore(
  set: HybridCandidateSet, task: string, unit: Float32Array | null, terms: string[], vectorWeight: number, codeWeight = 0,
  extras: RankingExtras = {},
): BlendedCandidate[] {
  const blended = blendCandidates(set, unit, terms, vectorWeight, codeWeight, { queryText: task, ...extras });
  if (unit === null) {
    const overlap = tokenOverlap(task);
    for (const c of blended) c.similarity = overlap(c.task);
  }
  return blended.sort(blendOrder);
}

/** rescore's order: higher blend first, then higher cosine, then smaller id. */
export function blendOrder(a: BlendedCandidate, b: BlendedCandidate): number {
  return b.blended - a.blended || b.cosine - a.cosine || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The keyword fallback's similarity to `task`: 1 for the same text, else token Jaccard. */
function tokenOverlap(task: string): (text: string) => number {
  const query = tokenSet(task);
  const exact = task.trim();
  return (text) => (text.trim() === exact ? 1 : jaccardOfSets(query, tokenSet(text)));
}

/** core/hybrid.ts blendCandidates (and the keyword fallback's similarity) in slices of `budget`; unordered. */
export async function blendInSlices(
  set: HybridCandidateSet, task: string, unit: Float32Array | null, terms: string[], vectorWeight: number, budget: WorkBudget,
  codeWeight = 0,
  extras: RankingExtras = {},
): Promise<BlendedCandidate[]> {
  const plan = blendPlan(set, unit, terms, vectorWeight, codeWeight, { queryText: task, ...extras });
  const centred = await budget.map(set.candidates, (c) => plan.centred(c));
  const vector = await budget.map(set.candidates, (c) => plan.vector(c));
  // BM25F walks the task and the code's terms: the heaviest step, counted three times.
  const codeShare: number[] = [];
  const keyword = await budget.map(set.candidates, (c) => {
    const score = plan.keyword(c);
    codeShare.push(plan.lastCodeShare());
    return score;
  }, 3);
  const ngram = plan.ngramWeight > 0 ? await budget.map(set.candidates, (c) => plan.ngram(c), 2) : undefined;
  const sides = {
    centred, vector, keyword, codeShare, vectorNorm: minMaxNormalise(vector), keywordNorm: minMaxNormalise(keyword),
    ngram, ngramNorm: ngram ? minMaxNormalise(ngram) : undefined,
  };
  const blended = await budget.map(set.candidates, (c, i) => withBlend(c, i, sides, plan.weight, plan.ngramWeight));
  if (unit === null) {
    const overlap = tokenOverlap(task);
    await budget.forRanges(blended.length, (from, to) => {
      for (let i = from; i < to; i++) blended[i].similarity = overlap(blended[i].task);
    }, 2);
  }
  return blended;
}
