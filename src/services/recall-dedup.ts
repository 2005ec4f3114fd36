import { setImmediate as nextTurn } from 'node:timers/promises';
import { NearDuplicateFilter } from '../core/dedup.js';
import { rankCandidates, type RankedCandidate, type RankOptions } from '../core/ranking.js';
import type { RecallCandidate } from '../core/types.js';

/**
 * Work done between two turns of the event loop (token sets built plus Jaccard comparisons):
 * well under a few milliseconds, so a health check or another recall is answered in between.
 */
const WORK_PER_SLICE = 500;

/**
 * Recall's ranking with its deduplication done in slices (docs/behavior.md "Recall" 4): rank
 * (core/ranking.ts, no dedup), then keep the first `ranking.keep` survivors of
 * NearDuplicateFilter, yielding to the event loop between slices of work.
 */
export async function rankInSlices<T extends RecallCandidate & { blended?: number }>(
  candidates: T[],
  ranking: RankOptions,
): Promise<(T & RankedCandidate)[]> {
  const ranked = rankCandidates(candidates, { ...ranking, deduplicate: false });
  if (!ranking.deduplicate) return ranked;
  const filter = new NearDuplicateFilter<T & RankedCandidate>((c) => c.task);
  let work = 0;
  let sliceEnd = WORK_PER_SLICE;
  for (const candidate of ranked) {
    if (filter.size >= ranking.keep) break;
    filter.offer(candidate);
    work++;
    if (work + filter.comparisons >= sliceEnd) {
      sliceEnd = work + filter.comparisons + WORK_PER_SLICE;
      await nextTurn();
    }
  }
  return filter.items();
}
