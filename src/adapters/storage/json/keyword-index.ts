import { averageLength, idf, termCounts, termScore, termsOf, type Bm25Stats } from '../../../core/bm25.js';

export interface KeywordHit {
  id: string;
  score: number;
}

/**
 * In-memory inverted index over one scope's task texts (hybrid recall's keyword side), kept
 * by ScopeState.apply, so replaying the journal rebuilds it and every learn, import and delete
 * maintains it. Each document gets a small integer slot; a posting list maps slot → term
 * frequency, so scoring a query adds into one Float64Array instead of a map keyed by id.
 */
export class KeywordIndex {
  private readonly postings = new Map<string, Map<number, number>>();
  private readonly slotOf = new Map<string, number>();
  private readonly ids: string[] = [];
  private readonly tasks: string[] = [];
  private readonly lengths: number[] = [];
  private readonly freeSlots: number[] = [];
  private totalTerms = 0;
  private scratch = new Float64Array(0);

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
    const slot = this.freeSlots.pop() ?? this.ids.length;
    const terms = termsOf(task);
    this.slotOf.set(id, slot);
    this.ids[slot] = id;
    this.tasks[slot] = task;
    this.lengths[slot] = terms.length;
    this.totalTerms += terms.length;
    for (const [term, tf] of termCounts(terms)) {
      let list = this.postings.get(term);
      if (!list) this.postings.set(term, (list = new Map()));
      list.set(slot, tf);
    }
  }

  remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    for (const term of new Set(termsOf(this.tasks[slot]))) {
      const list = this.postings.get(term);
      list?.delete(slot);
      if (list?.size === 0) this.postings.delete(term);
    }
    this.totalTerms -= this.lengths[slot];
    this.slotOf.delete(id);
    this.ids[slot] = '';
    this.tasks[slot] = '';
    this.lengths[slot] = 0;
    this.freeSlots.push(slot);
  }

  /** Project figures for BM25 with the document frequencies of `terms`. */
  stats(terms: readonly string[]): Bm25Stats {
    const df = new Map<string, number>();
    for (const t of terms) df.set(t, this.postings.get(t)?.size ?? 0);
    return { docs: this.docs, totalTerms: this.totalTerms, df };
  }

  /**
   * The k best documents by BM25 among those `accept` admits, best first (ties: smaller id
   * first). Only documents holding at least one query term score above 0 and are returned.
   */
  top(terms: readonly string[], k: number, accept?: (id: string) => boolean): KeywordHit[] {
    if (k <= 0 || this.docs === 0) return [];
    const stats = this.stats(terms);
    const avg = averageLength(stats);
    if (this.scratch.length < this.ids.length) this.scratch = new Float64Array(Math.max(this.ids.length, this.scratch.length * 2));
    const scores = this.scratch;
    const touched: number[] = [];
    for (const term of terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      const termIdf = idf(list.size, stats.docs);
      for (const [slot, tf] of list) {
        if (scores[slot] === 0) touched.push(slot);
        scores[slot] += termScore(termIdf, tf, this.lengths[slot], avg);
      }
    }
    const hits: KeywordHit[] = [];
    for (const slot of touched) {
      const score = scores[slot];
      scores[slot] = 0;
      const id = this.ids[slot];
      if (score > 0 && (accept === undefined || accept(id))) hits.push({ id, score });
    }
    hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return hits.length > k ? hits.slice(0, k) : hits;
  }
}
