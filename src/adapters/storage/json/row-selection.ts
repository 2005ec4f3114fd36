/**
 * Choosing a search's best rows from the scores of every row (the vector index's one-go
 * search): the k best by score, ties to the smaller id, among the rows a filter admits.
 */

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
  const heap = new RowHeap(k, ids);
  heap.offerRows(scores, 0, scores.length, items, accept);
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
  const heap = new RowHeap(k, ids, floor);
  for (let b = 0; b < blocks; b++) {
    if (maxima[b] < floor) continue;
    heap.offerRows(scores, b * SCORE_BLOCK_ROWS, (b + 1) * SCORE_BLOCK_ROWS);
  }
  // The rows after the last whole block have no maximum: all of them are offered.
  heap.offerRows(scores, blocks * SCORE_BLOCK_ROWS, scores.length);
  return heap.selected();
}

/** The k-th largest of values[0, n) (k ≤ n), by a min-heap of the k largest so far. */
function kthLargest(values: Float32Array, n: number, k: number): number {
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

/** A min-heap of the best k rows (score, then the smaller id), in parallel typed arrays. */
class RowHeap {
  private readonly heapScore: Float64Array;
  private readonly heapRow: Int32Array;
  private n = 0;
  /**
   * Rows scoring below this are refused: the worst kept score once full, before that the
   * caller's bound (-Infinity: none); Infinity for k = 0, when nothing enters.
   */
  private floor: number;

  constructor(private readonly k: number, private readonly ids: readonly string[], floor = -Infinity) {
    this.heapScore = new Float64Array(k);
    this.heapRow = new Int32Array(k);
    this.floor = k > 0 ? floor : Infinity;
  }

  /** Offers rows [from, to), row r scoring scores[r]; `accept` is asked only for a row that would enter. */
  offerRows<T>(scores: Float32Array, from: number, to: number, items?: readonly T[], accept?: (item: T) => boolean): void {
    const { heapScore, heapRow, k } = this;
    let floor = this.floor;
    for (let r = from; r < to; r++) {
      const s = scores[r];
      if (s < floor) continue;
      if (this.n === k && !this.worse(heapScore[0], heapRow[0], s, r)) continue;
      if (accept !== undefined && !accept(items![r])) continue;
      this.push(s, r);
      if (this.n === k) floor = heapScore[0];
    }
    this.floor = floor;
  }

  selected(): SelectedRows {
    return { rows: this.heapRow.subarray(0, this.n), scores: this.heapScore.subarray(0, this.n) };
  }

  private push(s: number, r: number): void {
    const { heapScore, heapRow } = this;
    let i: number;
    if (this.n < this.k) {
      i = this.n++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.worse(s, r, heapScore[p], heapRow[p])) break;
        heapScore[i] = heapScore[p];
        heapRow[i] = heapRow[p];
        i = p;
      }
    } else {
      i = 0;
      const n = this.n;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const c = l + 1 < n && this.worse(heapScore[l + 1], heapRow[l + 1], heapScore[l], heapRow[l]) ? l + 1 : l;
        if (!this.worse(heapScore[c], heapRow[c], s, r)) break;
        heapScore[i] = heapScore[c];
        heapRow[i] = heapRow[c];
        i = c;
      }
    }
    heapScore[i] = s;
    heapRow[i] = r;
  }

  /** Row a (score sa) ranks below row b: a lower score, or the same score and a larger id. */
  private worse(sa: number, ra: number, sb: number, rb: number): boolean {
    return sa < sb || (sa === sb && this.ids[ra] > this.ids[rb]);
  }
}
