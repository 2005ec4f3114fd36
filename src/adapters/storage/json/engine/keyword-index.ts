import { BM25_B, BM25_K1, averageLength, idf, keywordTermsOf, selectiveTerms, termCounts, type Bm25Stats } from '../../../../core/bm25.js';
import type { WorkBudget } from '../../../../core/slices.js';
import { IndexTopK } from './index-top-k.js';
import { TopRows } from './top-rows.js';

/** Posting entries added up (or documents copied out) per unit of a WorkBudget: a few ns each. */
const SUMS_PER_UNIT = 64;

/**
 * A query's postings at least 1 / DENSE_SHARE of the project's slots: scored densely (see
 * KeywordIndex.addDense). Either path finds the same hits; this only picks the cheaper one.
 */
const DENSE_SHARE = 4;

export interface KeywordHit {
  id: string;
  score: number;
}

/**
 * One term's documents: parallel arrays of slot and term frequency, grown by doubling, and
 * each document's BM25 contribution for this term as last computed, with the index generation
 * it was computed for (-1: never). A contribution depends on the project's size and average
 * length, so any change to the index makes every cached one stale.
 */
class Posting {
  slots = new Int32Array(4);
  tfs = new Float64Array(4);
  size = 0;
  contributions = new Float64Array(0);
  contributionsGeneration = -1;

  add(slot: number, tf: number): void {
    if (this.size === this.slots.length) {
      const slots = new Int32Array(this.size * 2);
      slots.set(this.slots);
      const tfs = new Float64Array(this.size * 2);
      tfs.set(this.tfs);
      this.slots = slots;
      this.tfs = tfs;
    }
    this.slots[this.size] = slot;
    this.tfs[this.size] = tf;
    this.size++;
  }

  /** Removes a slot by moving the last entry into its place (order does not matter). */
  remove(slot: number): void {
    const at = this.slots.subarray(0, this.size).indexOf(slot);
    if (at < 0) return;
    this.size--;
    this.slots[at] = this.slots[this.size];
    this.tfs[at] = this.tfs[this.size];
  }
}

/**
 * In-memory inverted index over one scope's task texts (hybrid recall's keyword side), kept
 * by ScopeState.apply, so replaying the journal rebuilds it and every learn, import and delete
 * maintains it. Each document gets a small integer slot; postings are typed arrays of slots
 * and term frequencies, and a query adds into one Float64Array, then keeps its k best in a heap.
 */
export class KeywordIndex {
  private readonly postings = new Map<string, Posting>();
  private readonly slotOf = new Map<string, number>();
  private readonly ids: string[] = [];
  private readonly tasks: string[] = [];
  private lengths = new Float64Array(256);
  private readonly freeSlots: number[] = [];
  private totalTerms = 0;
  private scores = new Float64Array(256);
  private touched = new Int32Array(256);
  /** Bumped by every change: a posting's cached contributions are valid for one generation. */
  private generation = 0;
  /** The last `stats` answer, for the same query's next ask (valid for its generation). */
  private lastStats: { terms: readonly string[]; generation: number; stats: Bm25Stats } | null = null;

  get docs(): number {
    return this.slotOf.size;
  }

  /** Indexes (or re-indexes) the task of `id`; unchanged text costs one lookup. */
  set(id: string, task: string): void {
    const existing = this.slotOf.get(id);
    if (existing !== undefined) {
      if (this.tasks[existing] === task) return;
      this.remove(id);
    }
    this.generation++;
    const slot = this.freeSlots.pop() ?? this.ids.length;
    if (slot >= this.lengths.length) this.grow(slot + 1);
    const terms = keywordTermsOf(task);
    this.slotOf.set(id, slot);
    this.ids[slot] = id;
    this.tasks[slot] = task;
    this.lengths[slot] = terms.length;
    this.totalTerms += terms.length;
    for (const [term, tf] of termCounts(terms)) {
      let posting = this.postings.get(term);
      if (!posting) this.postings.set(term, (posting = new Posting()));
      posting.add(slot, tf);
    }
  }

  remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    this.generation++;
    for (const term of new Set(keywordTermsOf(this.tasks[slot]))) {
      const posting = this.postings.get(term);
      posting?.remove(slot);
      if (posting?.size === 0) this.postings.delete(term);
    }
    this.totalTerms -= this.lengths[slot];
    this.slotOf.delete(id);
    this.ids[slot] = '';
    this.tasks[slot] = '';
    this.lengths[slot] = 0;
    this.freeSlots.push(slot);
  }

  /**
   * Project figures for BM25 with the document frequencies of `terms` (read-only: the same
   * object is handed to every caller asking with the same `terms` array while the index is
   * unchanged, as a hybrid recall does up to three times).
   */
  stats(terms: readonly string[]): Bm25Stats {
    const last = this.lastStats;
    if (last !== null && last.terms === terms && last.generation === this.generation) return last.stats;
    const df = new Map<string, number>();
    for (const t of terms) df.set(t, this.postings.get(t)?.size ?? 0);
    const stats = { docs: this.docs, totalTerms: this.totalTerms, df };
    this.lastStats = { terms, generation: this.generation, stats };
    return stats;
  }

  /**
   * The k best documents by BM25 over the query's selective terms (core/bm25.ts
   * selectiveTerms) among those `accept` admits, best first (ties: smaller id first).
   * `ordered: false` skips that last sort (hybrid recall orders its candidates itself, and
   * at a deep offset k is the whole scope).
   */
  top(terms: readonly string[], k: number, accept?: (id: string) => boolean, ordered = true): KeywordHit[] {
    if (k <= 0 || this.docs === 0) return [];
    const stats = this.stats(terms);
    const { selected, postings } = this.selectedPostings(terms, stats);
    // Positive scores only: an untouched slot scores 0 (every contribution is > 0).
    const heap = new IndexTopK(k, this.ids, Number.MIN_VALUE);
    // Terms are added in query order in both paths, so every sum is the same to the last bit.
    if (postings * DENSE_SHARE >= this.ids.length) this.addDense(selected, stats, heap, accept);
    else this.addSparse(selected, stats, heap, accept);
    if (ordered) return heap.sorted().map(({ index, score }) => ({ id: this.ids[index], score }));
    const { rows, scores } = heap.selected();
    return Array.from(rows, (slot, i) => ({ id: this.ids[slot], score: scores[i] }));
  }

  /**
   * Few postings: each first touch of a slot is remembered, and only those slots are offered.
   * Every touch tests whether the slot was touched before, a branch the CPU cannot predict.
   */
  private addSparse(selected: Posting[], stats: Bm25Stats, heap: IndexTopK, accept?: (id: string) => boolean): void {
    const scores = this.scores;
    const touched = this.touched;
    const touchedCount = this.sumTouched(selected, stats);
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i];
      const score = scores[slot];
      scores[slot] = 0;
      this.offer(heap, slot, score, accept);
    }
  }

  /**
   * Postings covering much of the project (the usual query: thousands of postings on a 10k
   * project): adds without the touched test, then walks every slot in order against a floor,
   * the heap's worst kept score once it is full. Nearly every slot is below the floor (or
   * untouched, 0), so the walk's branch is predictable; a slot at the floor may still enter
   * on a smaller id, which the heap decides. The scores are cleared in one fill.
   */
  private addDense(selected: Posting[], stats: Bm25Stats, heap: IndexTopK, accept?: (id: string) => boolean): void {
    const scores = this.scores;
    for (const posting of selected) {
      const contributions = this.contributionsOf(posting, stats);
      const { slots, size } = posting;
      for (let i = 0; i < size; i++) scores[slots[i]] += contributions[i];
    }
    const slotCount = this.ids.length;
    // An untouched slot (0) is below the heap's floor from the start.
    let floor = heap.floor;
    for (let slot = 0; slot < slotCount; slot++) {
      const score = scores[slot];
      if (score < floor) continue;
      this.offer(heap, slot, score, accept);
      floor = heap.floor;
    }
    scores.fill(0, 0, slotCount);
  }

  /** Offers a scored slot; the filter runs only for a slot that would enter the heap (it has no side effects). */
  private offer(heap: IndexTopK, slot: number, score: number, accept?: (id: string) => boolean): void {
    if (!heap.admits(slot, score)) return;
    if (accept === undefined || accept(this.ids[slot])) heap.offer(slot, score);
  }

  /**
   * `top(terms, k, accept, false)` in slices of `budget` (hybrid recall's keyword side: at a
   * deep offset k is most of the scope). The scores are added up in one go (the index's
   * scratch arrays are shared), copied out with each document's id, and the best k are then
   * chosen in slices; a document deleted meanwhile is dropped by the caller, which reads
   * every candidate's record after.
   */
  async topInSlices(terms: readonly string[], k: number, accept: ((id: string) => boolean) | undefined, budget: WorkBudget): Promise<KeywordHit[]> {
    if (k <= 0 || this.docs === 0) return [];
    const stats = this.stats(terms);
    const { selected, postings: added } = this.selectedPostings(terms, stats);
    // Few postings: top's one go (a fraction of a millisecond) costs less than slicing. Charged all the same.
    if (added / SUMS_PER_UNIT + k <= budget.perTurn) {
      const hits = this.top(terms, k, accept, false);
      if (budget.charge(added / SUMS_PER_UNIT + hits.length)) await budget.handBack();
      return hits;
    }
    const scores = this.scores;
    const touched = this.touched;
    const touchedCount = this.sumTouched(selected, stats);
    const found = new Float64Array(touchedCount);
    const ids = new Array<string>(touchedCount);
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i];
      found[i] = scores[slot];
      ids[i] = this.ids[slot];
      scores[slot] = 0;
    }
    budget.charge((added + touchedCount) / SUMS_PER_UNIT);
    const heap = new TopRows<null>(k);
    await budget.forRanges(touchedCount, (from, to) => {
      // Most documents score below the worst kept one: one number compare skips them.
      let floor = Math.max(heap.floor, 0);
      for (let i = from; i < to; i++) {
        if (found[i] < floor || found[i] === 0) continue;
        if (heap.admits(found[i], ids[i]) && (accept === undefined || accept(ids[i]))) {
          heap.offer(found[i], ids[i], null, 0);
          floor = Math.max(heap.floor, 0);
        }
      }
    });
    return heap.ids.map((id, i) => ({ id, score: heap.scores[i] }));
  }

  /** The postings of the query's selective terms (in query order) and their total size. */
  private selectedPostings(terms: readonly string[], stats: Bm25Stats): { selected: Posting[]; postings: number } {
    const selected: Posting[] = [];
    let postings = 0;
    for (const term of selectiveTerms(terms, stats)) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      selected.push(posting);
      postings += posting.size;
    }
    return { selected, postings };
  }

  /**
   * Adds the postings' contributions into `scores`, noting each slot's first touch in
   * `touched`; returns how many slots were touched (the caller reads and clears them).
   */
  private sumTouched(selected: Posting[], stats: Bm25Stats): number {
    const scores = this.scores;
    const touched = this.touched;
    let touchedCount = 0;
    for (const posting of selected) {
      const contributions = this.contributionsOf(posting, stats);
      const { slots, size } = posting;
      for (let i = 0; i < size; i++) {
        const slot = slots[i];
        if (scores[slot] === 0) touched[touchedCount++] = slot;
        scores[slot] += contributions[i];
      }
    }
    return touchedCount;
  }

  /**
   * Each document's BM25 contribution for the posting's term: termScore(idf, tf, len, avg)
   * with the length norm split into two constants. Recall after recall asks for the same few
   * terms while the project does not change, so the contributions are kept until it does:
   * the query then only adds them up (the division per document was most of this search).
   */
  private contributionsOf(posting: Posting, stats: Bm25Stats): Float64Array {
    if (posting.contributionsGeneration === this.generation) return posting.contributions;
    const avg = averageLength(stats);
    const normBase = BM25_K1 * (1 - BM25_B);
    const normPerTerm = avg > 0 ? (BM25_K1 * BM25_B) / avg : 0;
    const weight = idf(posting.size, stats.docs) * (BM25_K1 + 1);
    const { slots, tfs, size } = posting;
    if (posting.contributions.length < size) posting.contributions = new Float64Array(posting.slots.length);
    const out = posting.contributions;
    const lengths = this.lengths;
    for (let i = 0; i < size; i++) {
      const tf = tfs[i];
      out[i] = (weight * tf) / (tf + (avg > 0 ? normBase + normPerTerm * lengths[slots[i]] : BM25_K1));
    }
    posting.contributionsGeneration = this.generation;
    return out;
  }

  private grow(min: number): void {
    let size = this.lengths.length;
    while (size < min) size *= 2;
    const lengths = new Float64Array(size);
    lengths.set(this.lengths);
    this.lengths = lengths;
    this.scores = new Float64Array(size);
    this.touched = new Int32Array(size);
  }
}
