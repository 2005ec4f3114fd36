/**
 * The best k entries offered so far, each an index into the caller's arrays (the vector
 * index's rows, the keyword index's slots) with its score; ties go to the smaller id
 * (`ids[index]`). A min-heap in typed arrays whose root is the worst kept entry, so a scan
 * compares most scores with `floor` alone.
 */
export class IndexTopK {
  private readonly heapScore: Float64Array;
  private readonly heapIndex: Int32Array;
  private n = 0;
  /** Scores below this are refused: the caller's bound until full, then the worst kept score. */
  private bound: number;

  /** `floor`: no score below it is kept (-Infinity: any; Number.MIN_VALUE: positive only). */
  constructor(private readonly k: number, private readonly ids: readonly string[], floor = -Infinity) {
    this.heapScore = new Float64Array(k);
    this.heapIndex = new Int32Array(k);
    this.bound = k > 0 ? floor : Infinity;
  }

  /** The lowest score that may still be kept (a score at it may enter on a smaller id). */
  get floor(): number {
    return this.bound;
  }

  /** Whether offering (index, score) would change the heap (cheap: ask before a filter). */
  admits(index: number, score: number): boolean {
    if (!(score >= this.bound)) return false;
    return this.n < this.k || this.worse(this.heapScore[0], this.heapIndex[0], score, index);
  }

  /** Offers entries [from, to) of `scores` (index = position); `accept` is asked only for one that would enter. */
  offerRange<T>(scores: Float32Array, from: number, to: number, items?: readonly T[], accept?: (item: T) => boolean): void {
    const { heapScore, heapIndex, k } = this;
    let floor = this.bound;
    for (let r = from; r < to; r++) {
      const s = scores[r];
      if (s < floor) continue;
      if (this.n === k && !this.worse(heapScore[0], heapIndex[0], s, r)) continue;
      if (accept !== undefined && !accept(items![r])) continue;
      this.push(s, r);
      floor = this.bound;
    }
  }

  /** Keeps (index, score); call only when `admits` said yes. */
  offer(index: number, score: number): void {
    this.push(score, index);
  }

  /** The kept entries, unordered (views of the heap: read before offering more). */
  selected(): { rows: Int32Array; scores: Float64Array } {
    return { rows: this.heapIndex.subarray(0, this.n), scores: this.heapScore.subarray(0, this.n) };
  }

  /** The kept entries, best first (score, then the smaller id). */
  sorted(): { index: number; score: number }[] {
    const out = Array.from(this.heapIndex.subarray(0, this.n), (index, i) => ({ index, score: this.heapScore[i] }));
    return out.sort((a, b) => b.score - a.score || (this.ids[a.index] < this.ids[b.index] ? -1 : 1));
  }

  private push(s: number, r: number): void {
    const { heapScore, heapIndex } = this;
    let i: number;
    if (this.n < this.k) {
      i = this.n++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.worse(s, r, heapScore[p], heapIndex[p])) break;
        heapScore[i] = heapScore[p];
        heapIndex[i] = heapIndex[p];
        i = p;
      }
    } else {
      i = 0;
      const n = this.n;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const c = l + 1 < n && this.worse(heapScore[l + 1], heapIndex[l + 1], heapScore[l], heapIndex[l]) ? l + 1 : l;
        if (!this.worse(heapScore[c], heapIndex[c], s, r)) break;
        heapScore[i] = heapScore[c];
        heapIndex[i] = heapIndex[c];
        i = c;
      }
    }
    heapScore[i] = s;
    heapIndex[i] = r;
    if (this.n === this.k) this.bound = heapScore[0];
  }

  /** Entry a (score sa) ranks below entry b: a lower score, or the same score and a larger id. */
  private worse(sa: number, a: number, sb: number, b: number): boolean {
    return sa < sb || (sa === sb && this.ids[a] > this.ids[b]);
  }
}
