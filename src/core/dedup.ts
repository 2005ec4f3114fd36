import { jaccardOfSets, tokenSet } from './text.js';

/** Recall's dedup cut-off: tasks with token Jaccard strictly above this are near-duplicates. */
export const DEDUP_JACCARD_THRESHOLD = 0.7;

/**
 * Collapse near-duplicate tasks in an already ranked list. Grouping is transitive (A~B and
 * B~C put A, B, C in one group even when A and C differ more), so the result does not depend
 * on which pair happens to be compared first. Each group keeps its earliest, i.e.
 * best-ranked, member; survivors stay in their original order.
 */
export function dedupeByTask<T>(ranked: T[], taskOf: (t: T) => string, threshold = DEDUP_JACCARD_THRESHOLD): T[] {
  const tokens = ranked.map((item) => tokenSet(taskOf(item)));
  // Union-find whose root is always the smallest index of its group: the group's best rank.
  const parent = ranked.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  };
  for (let i = 0; i < ranked.length; i++) {
    for (let j = i + 1; j < ranked.length; j++) {
      if (jaccardOfSets(tokens[i], tokens[j]) <= threshold) continue;
      const ri = find(i);
      const rj = find(j);
      if (ri !== rj) parent[Math.max(ri, rj)] = Math.min(ri, rj);
    }
  }
  return ranked.filter((_, i) => find(i) === i);
}
