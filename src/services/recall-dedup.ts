import { setImmediate as nextTurn } from 'node:timers/promises';
import { NearDuplicateFilter } from '../core/dedup.js';
import { byId, candidateScore, codeTermsOf, scoreCandidate, type RankedCandidate, type RankOptions } from '../core/ranking.js';
import { sortInSlices, WorkBudget } from '../core/slices.js';
import type { RecallCandidate } from '../core/types.js';

/** A recall's work budget: its stages hand the event loop back with setImmediate (core/slices.ts). */
export function recallBudget(): WorkBudget {
  return new WorkBudget(() => nextTurn());
}

/**
 * Recall's ranking (core/ranking.ts rankCandidates, docs/behavior.md "Recall" 3–4) in slices of
 * bounded work: score each candidate, order by score (equal scores by `tiebreak`, then by the
 * smaller id), then take the first `ranking.keep` — with dedup, the first `keep` survivors of
 * NearDuplicateFilter. Only the page plus one is ever used, so the order past it is never
 * worked out: the sort's runs are merged only as far as the walk goes, and only the candidates
 * the walk reaches are copied with their factors (scoreCandidate); the rest are scored alone.
 */
export async function rankInSlices<T extends RecallCandidate & { blended?: number }>(
  candidates: T[],
  ranking: RankOptions,
  budget: WorkBudget,
  tiebreak?: (a: T, b: T) => number,
): Promise<(T & RankedCandidate)[]> {
  const scores = await budget.map(candidates, (c) => candidateScore(c, ranking));
  // Positions sorted as rankCandidates sorts (score, then `tiebreak`, then the smaller id),
  // whatever order the storage returned the candidates in, on every storage.
  const order = tiebreak
    ? (a: number, b: number) => scores[b] - scores[a] || tiebreak(candidates[a], candidates[b]) || byId(candidates[a], candidates[b])
    : (a: number, b: number) => scores[b] - scores[a] || byId(candidates[a], candidates[b]);
  const positions = new Array<number>(candidates.length);
  for (let i = 0; i < positions.length; i++) positions[i] = i;
  const ranked = await sortInSlices(positions, order, budget);
  const filter = ranking.deduplicate ? new NearDuplicateFilter<T & RankedCandidate>((c) => c.task, undefined, codeTermsOf) : null;
  const kept: (T & RankedCandidate)[] = [];
  let comparisons = 0;
  while ((filter ? filter.size : kept.length) < ranking.keep) {
    const at = ranked.next();
    if (at === undefined) break;
    const candidate = scoreCandidate(candidates[at], ranking);
    if (filter) filter.offer(candidate);
    else kept.push(candidate);
    // The merge step, plus the token set and the Jaccard comparisons dedup made.
    const work = 1 + (filter ? 1 + filter.comparisons - comparisons : 0);
    comparisons = filter?.comparisons ?? 0;
    if (budget.charge(work)) await budget.handBack();
  }
  return filter ? filter.items() : kept;
}
