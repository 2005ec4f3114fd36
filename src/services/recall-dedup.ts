import { setImmediate as nextTurn } from 'node:timers/promises';
import { NearDuplicateFilter } from '../core/dedup.js';
import { byScore, scoreCandidate, type RankedCandidate, type RankOptions } from '../core/ranking.js';
import { sortInSlices, WorkBudget } from '../core/slices.js';
import type { RecallCandidate } from '../core/types.js';

/** A recall's work budget: its stages hand the event loop back with setImmediate (core/slices.ts). */
export function recallBudget(): WorkBudget {
  return new WorkBudget(() => nextTurn());
}

/**
 * Recall's ranking (core/ranking.ts rankCandidates, docs/behavior.md "Recall" 3–4) in slices of
 * bounded work: score each candidate, order by score (equal scores by `tiebreak`, then as they
 * came), then take the first `ranking.keep` — with dedup, the first `keep` survivors of
 * NearDuplicateFilter. Only the page plus one is ever used, so the order past it is never
 * worked out: the sort's runs are merged only as far as the walk goes.
 */
export async function rankInSlices<T extends RecallCandidate & { blended?: number }>(
  candidates: T[],
  ranking: RankOptions,
  budget: WorkBudget,
  tiebreak?: (a: T, b: T) => number,
): Promise<(T & RankedCandidate)[]> {
  const scored = await budget.map(candidates, (c) => scoreCandidate(c, ranking));
  const order = tiebreak ? (a: T & RankedCandidate, b: T & RankedCandidate) => byScore(a, b) || tiebreak(a, b) : byScore;
  const ranked = await sortInSlices(scored, order, budget);
  const filter = ranking.deduplicate ? new NearDuplicateFilter<T & RankedCandidate>((c) => c.task) : null;
  const kept: (T & RankedCandidate)[] = [];
  let comparisons = 0;
  while ((filter ? filter.size : kept.length) < ranking.keep) {
    const candidate = ranked.next();
    if (candidate === undefined) break;
    if (filter) filter.offer(candidate);
    else kept.push(candidate);
    // The merge step, plus the token set and the Jaccard comparisons dedup made.
    const work = 1 + (filter ? 1 + filter.comparisons - comparisons : 0);
    comparisons = filter?.comparisons ?? 0;
    if (budget.charge(work)) await budget.handBack();
  }
  return filter ? filter.items() : kept;
}
