import { jaccardOfSets, tokenSet } from './text.js';

/** Recall's dedup cut-off: tasks with token Jaccard strictly above this are near-duplicates. */
export const DEDUP_JACCARD_THRESHOLD = 0.7;

/**
 * Collapse near-duplicate tasks in an already ranked list. Grouping is transitive (A~B and
 * B~C put A, B, C in one group even when A and C differ more), so the result does not depend
 * on which pair happens to be compared first. Each group keeps its earliest, i.e.
 * best-ranked, member; survivors stay in their original order.
 *
 * `maxKept` lets a caller that needs only the first N survivors stop early: items are taken
 * in rank order and the scan ends once N groups exist. Grouping is then exact within the
 * items read; an unread, lower-ranked item that would have bridged two of those groups is
 * not seen (recall accepts that in exchange for not comparing every pair of candidates).
 */
export function dedupeByTask<T>(
  ranked: T[],
  taskOf: (t: T) => string,
  threshold = DEDUP_JACCARD_THRESHOLD,
  maxKept = Number.POSITIVE_INFINITY,
): T[] {
  const tokens: Set<string>[] = [];
  // Union-find whose root is always the smallest index of its group: the group's best rank.
  const parent: number[] = [];
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  };
  let groups = 0;
  let read = 0;
  while (read < ranked.length && groups < maxKept) {
    const j = read++;
    tokens.push(tokenSet(taskOf(ranked[j])));
    parent.push(j);
    groups++;
    for (let i = 0; i < j; i++) {
      if (jaccardOfSets(tokens[i], tokens[j]) <= threshold) continue;
      const ri = find(i);
      const rj = find(j);
      if (ri !== rj) {
        parent[Math.max(ri, rj)] = Math.min(ri, rj);
        groups--;
      }
    }
  }
  const kept: T[] = [];
  for (let i = 0; i < read; i++) if (find(i) === i) kept.push(ranked[i]);
  return kept;
}
