/**
 * The best `capacity` rows offered so far by score (ties: the smaller id), for the sliced
 * search of the vector index. Unlike the index's one-go selection, which keeps row positions,
 * each entry keeps its id and item: a row's position may change while the loop is handed back
 * (a delete moves the last row into its hole), its id does not. Each entry also keeps `seq`,
 * the scan's write count when it was scored, so an entry of a row rewritten or deleted since
 * can be told apart (vector-index.ts, `SlicedScan`).
 */
export class TopRows<T> {
  /** Min-heap in parallel arrays (read them, never write): the root is the worst kept entry. */
  readonly scores: number[] = [];
  readonly ids: string[] = [];
  readonly items: T[] = [];
  readonly seqs: number[] = [];
  /** True once an entry was pushed out, or a row refused, for lack of room. */
  evicted = false;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.scores.length;
  }

  /**
   * A score below this is never kept (-Infinity while there is room): scans compare each row's
   * score with it before anything else. A row skipped that way must be noted with `refuse()`.
   */
  get floor(): number {
    return this.scores.length < this.capacity ? -Infinity : this.capacity > 0 ? this.scores[0] : Infinity;
  }

  /** Notes a row refused for lack of room without asking `admits` (it scored below `floor`). */
  refuse(): void {
    this.evicted = true;
  }

  /** Whether a row of this score and id would be kept (cheap: call before the filter). */
  admits(score: number, id: string): boolean {
    if (this.scores.length < this.capacity) return true;
    const kept = this.capacity > 0 && this.worse(this.scores[0], this.ids[0], score, id);
    if (!kept) this.evicted = true;
    return kept;
  }

  /** Keeps the row if it is among the best (call `admits` first); false when it was not kept. */
  offer(score: number, id: string, item: T, seq: number): boolean {
    if (!this.admits(score, id)) return false;
    const n = this.scores.length;
    let i: number;
    if (n < this.capacity) {
      i = n;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.worse(score, id, this.scores[p], this.ids[p])) break;
        this.put(i, this.scores[p], this.ids[p], this.items[p], this.seqs[p]);
        i = p;
      }
    } else {
      this.evicted = true;
      i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const c = l + 1 < n && this.worse(this.scores[l + 1], this.ids[l + 1], this.scores[l], this.ids[l]) ? l + 1 : l;
        if (!this.worse(this.scores[c], this.ids[c], score, id)) break;
        this.put(i, this.scores[c], this.ids[c], this.items[c], this.seqs[c]);
        i = c;
      }
    }
    this.put(i, score, id, item, seq);
    return true;
  }

  private put(i: number, score: number, id: string, item: T, seq: number): void {
    this.scores[i] = score;
    this.ids[i] = id;
    this.items[i] = item;
    this.seqs[i] = seq;
  }

  /** a ranks below b: lower score, or the same score and a larger id. */
  private worse(sa: number, ia: string, sb: number, ib: string): boolean {
    return sa < sb || (sa === sb && ia > ib);
  }
}
