/**
 * Choosing a search's best rows from the scores of every row (the vector index's one-go
 * search): the k best by score, ties to the smaller id, among the rows a filter admits.
 */
import { IndexTopK } from './index-top-k.js';

/** Rows per block of the int8 scan's block maxima (Int8Rows.blockMaxima). */
export const SCORE_BLOCK_ROWS = 16;

export interface SelectedRows {
  /** Row numbers, unordered. */
  rows: Int32Array;
  scores: Float64Array;
}

/**
 * The best k rows of `scores` among those `accept` admits (unordered), by a min-heap whose
 * root is the worst kept row. Most rows score below the root once the heap is full: one
 * compare with a local skips them.
 */
export function selectTop<T>(scores: Float32Array, k: number, ids: readonly string[], items: readonly T[], accept?: (item: T) => boolean): SelectedRows {
  const heap = new IndexTopK(k, ids);
  heap.offerRange(scores, 0, scores.length, items, accept);
  return heap.selected();
}

/**
 * selectTop without a filter, reading only the blocks of rows that can hold a winner. With
 * `maxima[b]` the best score of rows [16b, 16b + 16), let floor be the k-th best block maximum:
 * k blocks each hold a row scoring at least floor, so every one of the k best rows scores at
 * least floor, and a block whose maximum is below it holds none of them. On a 10k-row scan
 * about k blocks pass (some 1,300 rows instead of 10,000), and only their rows at or above
 * the floor enter the heap (a few more than k); the same rows come out as from selectTop (the
 * k best under one total order), only found in another order.
 */
export function selectTopByBlocks(scores: Float32Array, maxima: Float32Array, k: number, ids: readonly string[]): SelectedRows {
  const blocks = Math.floor(scores.length / SCORE_BLOCK_ROWS);
  const floor = blocks >= k ? kthLargest(maxima, blocks, k) : -Infinity;
  // No row below the floor is among the k best either: the heap takes only rows at or above it.
  const heap = new IndexTopK(k, ids, floor);
  for (let b = 0; b < blocks; b++) {
    if (maxima[b] < floor) continue;
    heap.offerRange(scores, b * SCORE_BLOCK_ROWS, (b + 1) * SCORE_BLOCK_ROWS);
  }
  // The rows after the last whole block have no maximum: all of them are offered.
  heap.offerRange(scores, blocks * SCORE_BLOCK_ROWS, scores.length);
  return heap.selected();
}

/**
 * selectTopByBlocks on the scan thread's answer (scan-thread.ts): the rows at or above the
 * same floor, with their scores, ascending as selectTopByBlocks offers them; the same rows
 * come out (ties go to the smaller id, which only this thread knows).
 */
export function selectFromThread(found: { floor: number; rows: Int32Array; scores: Float32Array }, k: number, ids: readonly string[]): SelectedRows {
  const heap = new IndexTopK(k, ids, found.floor);
  for (let i = 0; i < found.rows.length; i++) {
    if (heap.admits(found.rows[i], found.scores[i])) heap.offer(found.rows[i], found.scores[i]);
  }
  return heap.selected();
}

/**
 * The k-th largest of values[0, n) (k ≤ n), by a min-heap of the k largest so far. Self-contained
 * (no other name of this module): the scan thread's code embeds its source.
 */
export function kthLargest(values: Float32Array, n: number, k: number): number {
  const heap = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    let at = i;
    const v = values[i];
    while (at > 0 && heap[(at - 1) >> 1] > v) {
      heap[at] = heap[(at - 1) >> 1];
      at = (at - 1) >> 1;
    }
    heap[at] = v;
  }
  for (let i = k; i < n; i++) {
    const v = values[i];
    if (v <= heap[0]) continue;
    let at = 0;
    for (;;) {
      const l = 2 * at + 1;
      if (l >= k) break;
      const c = l + 1 < k && heap[l + 1] < heap[l] ? l + 1 : l;
      if (heap[c] >= v) break;
      heap[at] = heap[c];
      at = c;
    }
    heap[at] = v;
  }
  return heap[0];
}
