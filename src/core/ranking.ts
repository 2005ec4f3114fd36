import { DEDUP_JACCARD_THRESHOLD, dedupeByTask } from './dedup.js';
import { qualityFactor } from './quality.js';
import { recencyWeighted, type RecencyOptions } from './recency.js';
import type { RecallCandidate } from './types.js';

export interface RankedCandidate extends RecallCandidate {
  /** The ranking value: similarity × quality factor when eval-weighted, else similarity; × recency factor ^ weight. */
  score: number;
}

export interface RankOptions {
  evalWeighted: boolean;
  deduplicate: boolean;
  /** Survivors the caller will look at (its page plus one, for has_more): dedup stops there. */
  keep: number;
  /** Recency weighting (absent, or weight 0: none). */
  recency?: RecencyOptions;
}

/**
 * Recall's ranking (docs/behavior.md "Recall" 3-4): score each candidate, order by score (a stable
 * sort, so equal scores keep the storage's similarity order), then collapse near-duplicate
 * tasks, keeping the best-ranked member of each group. Recency applies before dedup, so of
 * two near-duplicates the fresher one can win; tiers are never derived from the score.
 */
export function rankCandidates(candidates: RecallCandidate[], opts: RankOptions): RankedCandidate[] {
  const ranked = candidates.map((c) => {
    const base = opts.evalWeighted ? c.similarity * qualityFactor(c.recent_evals) : c.similarity;
    return { ...c, score: opts.recency ? recencyWeighted(base, c.updated_at, opts.recency) : base };
  });
  ranked.sort((a, b) => b.score - a.score);
  return opts.deduplicate ? dedupeByTask(ranked, (r) => r.task, DEDUP_JACCARD_THRESHOLD, opts.keep) : ranked;
}
