import {
  BM25_B, BM25_K1, averageCodeLength, averageLength, idf, keywordTermsOf, selectiveTerms, termCounts, type Bm25Stats,
} from '../../../../core/bm25.js';
import { codeTermsOf } from '../../../../core/code-terms.js';
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
 * One term's documents (those holding it in their task or their code: its size is the term's
 * document frequency): parallel arrays of slot, task term frequency and code term frequency,
 * grown by doubling, and each document's BM25F contribution for this term as last computed,
 * with the index generation and code weight it was computed for (-1: never). A contribution
 * depends on the project's size and average lengths, so any change to the index makes every
 * cached one stale.
 */
class Posting {
  slots = new Int32Array(4);
  tfs = new Float64Array(4);
  codeTfs = new Float64Array(4);
  size = 0;
  contributions = new Float64Array(0);
  contributionsGeneration = -1;
  contributionsCodeWeight = -1;

  add(slot: number, tf: number, codeTf: number): void {
    if (this.size === this.slots.length) {
      const slots = new Int32Array(this.size * 2);
      slots.set(this.slots);
      const tfs = new Float64Array(this.size * 2);
      tfs.set(this.tfs);
      const codeTfs = new Float64Array(this.size * 2);
      codeTfs.set(this.codeTfs);
      this.slots = slots;
      this.tfs = tfs;
      this.codeTfs = codeTfs;
    }
    this.slots[this.size] = slot;
    this.tfs[this.size] = tf;
    this.codeTfs[this.size] = codeTf;
    this.size++;
  }

  /** Removes a slot by moving the last entry into its place (order does not matter). */
  remove(slot: number): void {
    const at = this.slots.subarray(0, this.size).indexOf(slot);
    if (at < 0) return;
    this.size--;
    this.slots[at] = this.slots[this.size];
    this.tfs[at] = this.tfs[this.size];
    this.codeTfs[at] = this.codeTfs[this.size];
  }
}

/**
 * In-memory inverted index over one scope's task texts and code terms (hybrid recall's keyword
 * side, BM25F over both fields; core/code-terms.ts), kept
 * by ScopeState.apply, so replaying the journal rebuilds it and every learn, import and delete
 * maintains it. Each document gets a small integer slot; postings are typed arrays of slots
 * and term frequencies, and a query adds into one Float64Array, then keeps its k best in a heap.
 */
export class KeywordIndex {
  private readonly postings = new Map<string, Posting>();
  private readonly slotOf = new Map<string, number>();
  private readonly ids: string[] = [];
  private readonly tasks: string[] = [];
  private readonly codes: string[] = [];
  /** Each slot's code terms as one text (core/code-terms.ts codeTermText), as candidates carry them. */
  private readonly codeTexts: string[] = [];
  private lengths = new Float64Array(256);
  private codeLengths = new Float64Array(256);
  private readonly freeSlots: number[] = [];
  private totalTerms = 0;
  private totalCodeTerms = 0;
  private scores = new Float64Array(256);
  private touched = new Int32Array(256);
  /** Bumped by every change: a posting's cached contributions are valid for one generation. */
  private generation = 0;
  /** The last `stats` answer, for the same query's next ask (valid for its generation). */
  private lastStats: { terms: readonly string[]; generation: number; stats: Bm25Stats } | null = null;

  get docs(): number {
    return this.slotOf.size;
  }

  /** Indexes (or re-indexes) the task and code of `id`; unchanged text costs one lookup. */
  set(id: string, task: string, code = ''): void {
    const existing = this.slotOf.get(id);
    if (existing !== undefined) {
      if (this.tasks[existing] === task && this.codes[existing] === code) return;
      this.remove(id);
    }
    this.generation++;
    const slot = this.freeSlots.pop() ?? this.ids.length;
    if (slot >= this.lengths.length) this.grow(slot + 1);
    const terms = keywordTermsOf(task);
    const codeTerms = codeTermsOf(code);
    this.slotOf.set(id, slot);
    this.ids[slot] = id;
    this.tasks[slot] = task;
    this.codes[slot] = code;
    this.codeTexts[slot] = codeTerms.join(' ');
    this.lengths[slot] = terms.length;
    this.codeLengths[slot] = codeTerms.length;
    this.totalTerms += terms.length;
    this.totalCodeTerms += codeTerms.length;
    const taskCounts = termCounts(terms);
    const codeCounts = termCounts(codeTerms);
    for (const [term, tf] of taskCounts) this.posting(term).add(slot, tf, codeCounts.get(term) ?? 0);
    for (const [term, codeTf] of codeCounts) if (!taskCounts.has(term)) this.posting(term).add(slot, 0, codeTf);
  }

  private posting(term: string): Posting {
    let posting = this.postings.get(term);
    if (!posting) this.postings.set(term, (posting = new Posting()));
    return posting;
  }

  remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    this.generation++;
    const terms = new Set(keywordTermsOf(this.tasks[slot]));
    for (const term of keywordTermsOf(this.codeTexts[slot])) terms.add(term);
    for (const term of terms) {
      const posting = this.postings.get(term);
      posting?.remove(slot);
      if (posting?.size === 0) this.postings.delete(term);
    }
    this.totalTerms -= this.lengths[slot];
    this.totalCodeTerms -= this.codeLengths[slot];
    this.slotOf.delete(id);
    this.ids[slot] = '';
    this.tasks[slot] = '';
    this.codes[slot] = '';
    this.codeTexts[slot] = '';
    this.lengths[slot] = 0;
    this.codeLengths[slot] = 0;
    this.freeSlots.push(slot);
  }

  /** The code terms of `id` as one text ('' for an unknown id or no code): what its hybrid candidate carries. */
  codeTermsOf(id: string): string {
    const slot = this.slotOf.get(id);
    return slot === undefined ? '' : this.codeTexts[slot];
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
    const stats = { docs: this.docs, totalTerms: this.totalTerms, totalCodeTerms: this.totalCodeTerms, df };
    this.lastStats = { terms, generation: this.generation, stats };
    return stats;
  }

  /**
   * The k best documents by BM25 over the query's selective terms (core/bm25.ts
   * selectiveTerms) among those `accept` admits, best first (ties: smaller id first).
   * `ordered: false` skips that last sort (hybrid recall orders its candidates itself, and
   * at a deep offset k is the whole scope).
   */
  top(terms: readonly string[], k: number, accept?: (id: string) => boolean, ordered = true, codeWeight = 0): KeywordHit[] {
    if (k <= 0 || this.docs === 0) return [];
    const stats = this.stats(terms);
    const { selected, postings } = this.selectedPostings(terms, stats);
    // Positive scores only: an untouched slot scores 0 (every contribution is > 0).
    const heap = new IndexTopK(k, this.ids, Number.MIN_VALUE);
    // Terms are added in query order in both paths, so every sum is the same to the last bit.
    if (postings * DENSE_SHARE >= this.ids.length) this.addDense(selected, stats, codeWeight, heap, accept);
    else this.addSparse(selected, stats, codeWeight, heap, accept);
    if (ordered) return heap.sorted().map(({ index, score }) => ({ id: this.ids[index], score }));
    const { rows, scores } = heap.selected();
    return Array.from(rows, (slot, i) => ({ id: this.ids[slot], score: scores[i] }));
  }

  /**
   * Few postings: each first touch of a slot is remembered, and only those slots are offered.
   * Every touch tests whether the slot was touched before, a branch the CPU cannot predict.
   */
  private addSparse(selected: Posting[], stats: Bm25Stats, codeWeight: number, heap: IndexTopK, accept?: (id: string) => boolean): void {
    const scores = this.scores;
    const touched = this.touched;
    const touchedCount = this.sumTouched(selected, stats, codeWeight);
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
  private addDense(selected: Posting[], stats: Bm25Stats, codeWeight: number, heap: IndexTopK, accept?: (id: string) => boolean): void {
    const scores = this.scores;
    for (const posting of selected) {
      const contributions = this.contributionsOf(posting, stats, codeWeight);
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
  async topInSlices(
    terms: readonly string[], k: number, accept: ((id: string) => boolean) | undefined, budget: WorkBudget, codeWeight = 0,
  ): Promise<KeywordHit[]> {
    if (k <= 0 || this.docs === 0) return [];
    const stats = this.stats(terms);
    const { selected, postings: added } = this.selectedPostings(terms, stats);
    // Few postings: top's one go (a fraction of a millisecond) costs less than slicing. Charged all the same.
    if (added / SUMS_PER_UNIT + k <= budget.perTurn) {
      const hits = this.top(terms, k, accept, false, codeWeight);
      if (budget.charge(added / SUMS_PER_UNIT + hits.length)) await budget.handBack();
      return hits;
    }
    const scores = this.scores;
    const touched = this.touched;
    const touchedCount = this.sumTouched(selected, stats, codeWeight);
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
  private sumTouched(selected: Posting[], stats: Bm25Stats, codeWeight: number): number {
    const scores = this.scores;
    const touched = this.touched;
    let touchedCount = 0;
    for (const posting of selected) {
      const contributions = this.contributionsOf(posting, stats, codeWeight);
      const { slots, size } = posting;
      for (let i = 0; i < size; i++) {
        // A code-only posting adds 0 without the code field: it must not count as a touch.
        if (contributions[i] === 0) continue;
        const slot = slots[i];
        if (scores[slot] === 0) touched[touchedCount++] = slot;
        scores[slot] += contributions[i];
      }
    }
    return touchedCount;
  }

  /**
   * Each document's BM25F contribution for the posting's term (core/bm25.ts fieldTermScore):
   * a document without the term in its code (or a code weight of 0) gets termScore(idf, tf,
   * len, avg) with the length norm split into two constants; one with it, the fields'
   * normalised frequencies summed and saturated once. Recall after recall asks for the same
   * few terms while the project does not change, so the contributions are kept until it does
   * (or the code weight differs): the query then only adds them up (the division per document
   * was most of this search).
   */
  private contributionsOf(posting: Posting, stats: Bm25Stats, codeWeight: number): Float64Array {
    if (posting.contributionsGeneration === this.generation && posting.contributionsCodeWeight === codeWeight) return posting.contributions;
    const avg = averageLength(stats);
    const avgCode = averageCodeLength(stats);
    const normBase = BM25_K1 * (1 - BM25_B);
    const normPerTerm = avg > 0 ? (BM25_K1 * BM25_B) / avg : 0;
    const termIdf = idf(posting.size, stats.docs);
    const weight = termIdf * (BM25_K1 + 1);
    const { slots, tfs, codeTfs, size } = posting;
    if (posting.contributions.length < size) posting.contributions = new Float64Array(posting.slots.length);
    const out = posting.contributions;
    const lengths = this.lengths;
    const codeLengths = this.codeLengths;
    for (let i = 0; i < size; i++) {
      const tf = tfs[i];
      const codeTf = codeTfs[i];
      if (codeTf > 0 && codeWeight > 0) {
        const x = (tf > 0 ? tf / (avg > 0 ? 1 - BM25_B + (BM25_B * lengths[slots[i]]) / avg : 1) : 0)
          + codeWeight * (codeTf / (avgCode > 0 ? 1 - BM25_B + (BM25_B * codeLengths[slots[i]]) / avgCode : 1));
        out[i] = (weight * x) / (x + BM25_K1);
      } else {
        // A code-only posting scores 0 without the code field: no candidate by it (0 never enters the heap).
        out[i] = tf > 0 ? (weight * tf) / (tf + (avg > 0 ? normBase + normPerTerm * lengths[slots[i]] : BM25_K1)) : 0;
      }
    }
    posting.contributionsGeneration = this.generation;
    posting.contributionsCodeWeight = codeWeight;
    return out;
  }

  private grow(min: number): void {
    let size = this.lengths.length;
    while (size < min) size *= 2;
    const lengths = new Float64Array(size);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const codeLengths = new Float64Array(size);
    codeLengths.set(this.codeLengths);
    this.codeLengths = codeLengths;
    this.scores = new Float64Array(size);
    this.touched = new Int32Array(size);
  }
}
