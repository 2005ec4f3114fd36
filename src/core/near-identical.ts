import { termsOf } from './text.js';

/**
 * Learn's near-identical rule (docs/behavior.md "Learn" 5): a stored pattern is the same task
 * when its embedding is this close (cosine) AND its wording is the same in the same order.
 */
export const NEAR_IDENTICAL_SIMILARITY = 0.9;

/**
 * Wording: the ordered overlap of the two word sequences, LCS / (|a| + |b| − LCS) (token
 * Jaccard with order: the longest common subsequence in place of the intersection), at least
 * this. The same cut-off the unordered rule had, so one added word is tolerated from 12 words
 * and one changed word from 24, as before; but "octal to decimal" and "decimal to octal", the
 * same bag of words, no longer are (the bundled embedding model cannot tell them apart).
 */
export const NEAR_IDENTICAL_WORDING = 0.92;

/**
 * A task's words as the rule compares them: case, spacing and punctuation gone, order kept
 * (core/text.ts termsOf). Computed once per learn and compared with each candidate.
 */
export function taskWords(task: string): readonly string[] {
  return termsOf(task);
}

/** Both rules: close in meaning and the same wording in the same order. */
export function isNearIdentical(similarity: number, words: readonly string[], otherTask: string): boolean {
  return similarity >= NEAR_IDENTICAL_SIMILARITY && sameWording(words, taskWords(otherTask));
}

/**
 * Ordered overlap of `a` and `b` ≥ `threshold`. Overlap L / (n + m − L) ≥ t exactly when the
 * insert/delete edit distance n + m − 2L is at most (n + m)(1 − t)/(1 + t), so only a band of
 * that width around the diagonal is worked out: O(n × edits), not O(n × m), for a long task.
 * Sequences with no words are never near-identical (nothing to compare, as token Jaccard).
 */
export function sameWording(a: readonly string[], b: readonly string[], threshold = NEAR_IDENTICAL_WORDING): boolean {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return false;
  // The small epsilon keeps an exact boundary (e.g. 1 edit of 25 words at 0.92) on the right side of rounding.
  const maxEdits = Math.floor(((n + m) * (1 - threshold)) / (1 + threshold) + 1e-9);
  if (Math.abs(n - m) > maxEdits) return false;
  const edits = editsWithin(a, b, maxEdits);
  if (edits > maxEdits) return false;
  const common = (n + m - edits) / 2;
  return common / (n + m - common) >= threshold - 1e-12;
}

/**
 * The insert/delete edit distance of `a` and `b` (n + m − 2 × LCS), or `limit + 1` once it
 * must exceed `limit`. Cells farther than `limit` from the diagonal cannot lie on a path within
 * the limit, so each row works out only its band.
 */
function editsWithin(a: readonly string[], b: readonly string[], limit: number): number {
  const n = a.length;
  const m = b.length;
  const over = limit + 1;
  let prev = new Int32Array(m + 1).fill(over);
  let cur = new Int32Array(m + 1).fill(over);
  for (let j = 0; j <= Math.min(m, limit); j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    const lo = Math.max(0, i - limit);
    const hi = Math.min(m, i + limit);
    // Out-of-band neighbours read as "over the limit".
    if (lo > 0) cur[lo - 1] = over;
    if (hi < m) cur[hi + 1] = over;
    let rowBest = over;
    for (let j = lo; j <= hi; j++) {
      let v: number;
      if (j === 0) {
        v = i;
      } else {
        v = Math.min(prev[j] + 1, cur[j - 1] + 1);
        if (a[i - 1] === b[j - 1] && prev[j - 1] < v) v = prev[j - 1];
      }
      if (v > over) v = over;
      cur[j] = v;
      if (v < rowBest) rowBest = v;
    }
    if (rowBest > limit) return over;
    [prev, cur] = [cur, prev];
  }
  return prev[m];
}
