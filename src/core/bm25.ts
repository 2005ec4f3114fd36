/**
 * BM25 over task text (docs/behavior.md "Recall" 2): the keyword half of hybrid ranking. Terms
 * come from the same tokenizer as every other lexical comparison (core/text.ts): lower-case,
 * Unicode letters and digits, everything else a separator. Both storages keep per-project
 * document frequencies, document count and total term count; the score itself is computed
 * here, so both give the same number for the same project.
 */
import { isAsciiWordChar, termsOf } from './text.js';

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

// Every term of a text, repeats kept: the tokenizer of core/text.ts (tokenSet gives the same terms as a set).
export { termsOf };

/**
 * The longest term, in UTF-8 bytes, that is a keyword. A longer run of letters and digits (a
 * pasted blob, a base64 payload) is no word anyone searches by, and PostgreSQL cannot index
 * it at all (a btree entry holds at most about 2.7 kB): it is left out of the keyword side on
 * both storages, for documents (their postings and length) and queries alike, and the pattern
 * is stored as any other. Migration 0009's recall_terms applies the same bound in SQL.
 */
export const MAX_KEYWORD_TERM_BYTES = 256;

/** True when `term` is short enough to be a keyword (MAX_KEYWORD_TERM_BYTES). */
export function isKeywordTerm(term: string): boolean {
  // A UTF-16 unit is 1 to 3 UTF-8 bytes (a surrogate pair 4 for two units): most terms are decided by their length alone.
  if (term.length * 3 <= MAX_KEYWORD_TERM_BYTES) return true;
  if (term.length > MAX_KEYWORD_TERM_BYTES) return false;
  return utf8Length(term) <= MAX_KEYWORD_TERM_BYTES;
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The keyword terms of a text, repeats kept: termsOf without the terms too long to be keywords. */
export function keywordTermsOf(text: string): string[] {
  const terms = termsOf(text);
  return terms.every(isKeywordTerm) ? terms : terms.filter(isKeywordTerm);
}

/** Distinct keyword terms of a text, in first-seen order (a query's terms). */
export function distinctTerms(text: string): string[] {
  return [...new Set(keywordTermsOf(text))];
}

/** Term → how often it occurs. */
export function termCounts(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

/** What BM25 needs to know of the project: its size and the query terms' document frequencies. */
export interface Bm25Stats {
  /** Patterns in the project. */
  docs: number;
  /** Sum of the patterns' term counts (average document length = totalTerms / docs). */
  totalTerms: number;
  /** Document frequency of each query term (absent: 0): patterns holding it in their task or their code. */
  df: ReadonlyMap<string, number>;
  /** Sum of the patterns' code term counts (core/code-terms.ts; absent: 0, no code field). */
  totalCodeTerms?: number;
}

/**
 * The code field's weight in BM25F beside the task's 1 (SERVICE_RECALL_CODE_WEIGHT's default;
 * measured with `npm run bench -- --recall-quality`, docs/recall.md).
 */
export const DEFAULT_CODE_WEIGHT = 1;

/**
 * Keyword candidates are found through the query's selective terms only: those held by at
 * most max(SELECTIVE_MIN_DOCS, min(SELECTIVE_SHARE × patterns, SELECTIVE_MAX_DOCS)) of the
 * project. A word in most tasks ("in", "a", "file" in a file-heavy project) would make every
 * pattern a candidate while adding almost nothing to BM25; the candidates found are still
 * re-scored on every term. The absolute cap bounds the keyword side's work (posting rows read
 * per query term) whatever the project's size: at a million patterns, 20% would be 200,000
 * rows for one common word, and a word that common has an idf too low to lift a pattern by
 * itself; the rare words that do are well under the cap.
 *
 * The cap was 1,000, then 250, now 125, each step measured with CoNaLa's questions asked of a
 * project grown with distractors (`npm run bench -- --recall-quality --at-size N`):
 * - 1,000 → 250: at 10k the same precision@1 (61.5 % among templated distractors, 63.3 % among
 *   zipfian ones) and MRR (0.667, 0.687) at 1,000, 500 and 250; p@5 73.5 % and 76.6 → 76.2 %.
 * - 250 → 125: at 10k precision@1 61.5 % and 63.3 → 63.5 %, MRR 0.667 and 0.687 → 0.685, p@5
 *   73.5 → 73.3 % and 76.2 → 75.9 %; at 1k and 3k precision@1 the same or 0.2 points up, p@5
 *   down by 0 to 0.5 points (at most 2 of 449 questions). A zipfian query at 10k reads half
 *   the posting rows (bench/corpora.ts postingShare 0.033 → 0.015 of the project), and
 *   PostgreSQL's hybrid statement costs 0.38 ms more than the cosine one instead of 0.47
 *   (the hybrid ranking's budget: a recall at most 0.3 ms more CPU in all).
 * A word above the cap finds no candidates by itself: its candidates are mostly patterns
 * sharing only it, and the vector side finds the rest. It still counts in every candidate's
 * BM25.
 */
export const SELECTIVE_SHARE = 0.2;
export const SELECTIVE_MIN_DOCS = 50;
export const SELECTIVE_MAX_DOCS = 125;

/** The most patterns a selective term may be held by, in a project of `docs` patterns. */
export function selectiveDocCap(docs: number): number {
  return Math.max(SELECTIVE_MIN_DOCS, Math.min(SELECTIVE_SHARE * docs, SELECTIVE_MAX_DOCS));
}

export function selectiveTerms(terms: readonly string[], stats: Pick<Bm25Stats, 'docs' | 'df'>): string[] {
  const cap = selectiveDocCap(stats.docs);
  return terms.filter((t) => (stats.df.get(t) ?? 0) <= cap);
}

/** Robertson–Spärck Jones idf with the +1 inside the log, so a term in every document still counts a little. */
export function idf(df: number, docs: number): number {
  const n = Math.max(docs, df);
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** One term's contribution: idf × tf (k1 + 1) / (tf + k1 (1 − b + b · len / avgLen)). */
export function termScore(termIdf: number, tf: number, docLength: number, averageLength: number): number {
  if (tf <= 0) return 0;
  const norm = averageLength > 0 ? docLength / averageLength : 1;
  return (termIdf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * norm));
}

export function averageLength(stats: Pick<Bm25Stats, 'docs' | 'totalTerms'>): number {
  return stats.docs > 0 ? stats.totalTerms / stats.docs : 0;
}

/** The average code length in terms (0: no code anywhere). */
export function averageCodeLength(stats: Pick<Bm25Stats, 'docs' | 'totalCodeTerms'>): number {
  return stats.docs > 0 ? (stats.totalCodeTerms ?? 0) / stats.docs : 0;
}

/**
 * BM25F's length-normalised term frequency of one field: tf / (1 − b + b · len / avgLen).
 * Each field has its own average length; a field no pattern has (avgLen 0) is not normalised.
 */
export function fieldFrequency(tf: number, length: number, averageLen: number): number {
  return tf / (averageLen > 0 ? 1 - BM25_B + (BM25_B * length) / averageLen : 1);
}

/**
 * One term's BM25F contribution over task and code (docs/behavior.md "Recall" 2): the fields'
 * normalised frequencies, the code's times `codeWeight`, are summed, then saturated once:
 * idf × x (k1 + 1) / (x + k1). A term the code does not hold (or a code weight of 0) gives
 * exactly termScore's number, the task-only BM25 (the same value, written as before).
 */
export function fieldTermScore(
  termIdf: number, tf: number, length: number, averageLen: number, codeTf: number, codeLength: number, averageCodeLen: number, codeWeight: number,
): number {
  if (!(codeTf > 0) || !(codeWeight > 0)) return termScore(termIdf, tf, length, averageLen);
  const x = (tf > 0 ? fieldFrequency(tf, length, averageLen) : 0) + codeWeight * fieldFrequency(codeTf, codeLength, averageCodeLen);
  return (termIdf * x * (BM25_K1 + 1)) / (x + BM25_K1);
}

/** A document's code field: its term counts and length (core/code-terms.ts), and the field's weight. */
export interface CodeField {
  counts: ReadonlyMap<string, number>;
  length: number;
  weight: number;
}

/** BM25 of one document for the query's distinct terms (BM25F when `code` is given). */
export function bm25(
  queryTerms: readonly string[], doc: ReadonlyMap<string, number>, docLength: number, stats: Bm25Stats, code?: CodeField,
): number {
  const avg = averageLength(stats);
  const avgCode = averageCodeLength(stats);
  let score = 0;
  for (const term of queryTerms) {
    const tf = doc.get(term) ?? 0;
    const codeTf = code?.counts.get(term) ?? 0;
    if (tf > 0 || (codeTf > 0 && code!.weight > 0)) {
      score += fieldTermScore(idf(stats.df.get(term) ?? 0, stats.docs), tf, docLength, avg, codeTf, code?.length ?? 0, avgCode, code?.weight ?? 0);
    }
  }
  return score;
}

/**
 * BM25 of a task text (tokenized here) for the query's distinct terms; with `codeTerms` (the
 * code's term text, core/code-terms.ts codeTermText) and a code weight, BM25F over both.
 */
export function bm25OfText(queryTerms: readonly string[], task: string, stats: Bm25Stats, codeTerms = '', codeWeight = 0): number {
  const terms = keywordTermsOf(task);
  const code = codeTerms === '' || !(codeWeight > 0) ? undefined : codeFieldOf(codeTerms, codeWeight);
  return bm25(queryTerms, termCounts(terms), terms.length, stats, code);
}

function codeFieldOf(codeTerms: string, weight: number): CodeField {
  const terms = keywordTermsOf(codeTerms);
  return { counts: termCounts(terms), length: terms.length, weight };
}

/**
 * bm25OfText for many texts and one query, the same numbers at a fraction of the cost: recall
 * scores every candidate's task (some 40 per request), and building a term array and a count
 * map per task was most of its keyword re-scoring. Here each query term's idf is worked out once;
 * an ASCII text is walked in place, each word compared with the query terms of its length
 * (case folded while comparing) and counted into one reused array, so nothing is allocated
 * per text. Any other text takes bm25OfText's own path. The score adds the same terms in the
 * same order with the same operands as bm25, so it is equal to the last bit.
 */
export class Bm25Scorer {
  private readonly idfs: number[];
  /** Index of each query term's first occurrence (a repeated term counts where it first appears). */
  private readonly first: number[];
  private readonly tfs: Float64Array;
  private readonly codeTfs: Float64Array;
  private readonly avg: number;
  private readonly avgCode: number;
  /** What the code field added to the last `score` (explain's code_bm25; 0 on the non-ASCII path). */
  lastCodeShare = 0;
  /**
   * Term length → the indexes (ascending) of the first occurrences of that length: a word is
   * compared only with the query terms it could equal, in the order a walk over all would.
   */
  private readonly byLength: number[][] = [];

  constructor(
    private readonly queryTerms: readonly string[],
    private readonly stats: Bm25Stats,
    /** The code field's weight (0: task alone, plain BM25). */
    private readonly codeWeight = 0,
  ) {
    this.idfs = queryTerms.map((t) => idf(stats.df.get(t) ?? 0, stats.docs));
    this.first = queryTerms.map((t) => queryTerms.indexOf(t));
    this.tfs = new Float64Array(queryTerms.length);
    this.codeTfs = new Float64Array(queryTerms.length);
    this.avg = averageLength(stats);
    this.avgCode = averageCodeLength(stats);
    queryTerms.forEach((term, j) => {
      if (this.first[j] === j) (this.byLength[term.length] ??= []).push(j);
    });
  }

  /** BM25 of `task`, or BM25F with the code's term text `codeTerms` (core/code-terms.ts) when the code weight is above 0. */
  score(task: string, codeTerms = ''): number {
    const withCode = this.codeWeight > 0 && codeTerms !== '';
    const length = this.countAscii(task, this.tfs);
    const codeLength = withCode ? this.countTermText(codeTerms, this.codeTfs) : 0;
    if (length < 0) {
      const score = bm25OfText(this.queryTerms, task, this.stats, codeTerms, this.codeWeight);
      this.lastCodeShare = withCode ? score - bm25OfText(this.queryTerms, task, this.stats) : 0;
      return score;
    }
    let score = 0;
    let codeShare = 0;
    for (let j = 0; j < this.queryTerms.length; j++) {
      const tf = this.tfs[this.first[j]];
      const codeTf = withCode ? this.codeTfs[this.first[j]] : 0;
      if (!(tf > 0 || codeTf > 0)) continue;
      const term = fieldTermScore(this.idfs[j], tf, length, this.avg, codeTf, codeLength, this.avgCode, this.codeWeight);
      score += term;
      // What the code added to this term: all of it, or its share over the task alone.
      if (codeTf > 0) codeShare += tf > 0 ? term - termScore(this.idfs[j], tf, length, this.avg) : term;
    }
    this.lastCodeShare = codeShare;
    return score;
  }

  /**
   * Counts the query terms of a term text (terms already tokenized, lower-cased and joined by
   * one space, as core/code-terms.ts codeTermText writes them) into `tfs`; returns its term
   * count. A native search for each space and a compare only against the query terms of the
   * word's length: a code's bag is some 30–130 terms, and a character walk over it was most of
   * the code field's cost per candidate. keywordTermsOf of such a text gives the same terms.
   */
  private countTermText(text: string, tfs: Float64Array): number {
    tfs.fill(0);
    if (text.length === 0) return 0;
    let length = 0;
    for (let start = 0; start <= text.length;) {
      let end = text.indexOf(' ', start);
      if (end < 0) end = text.length;
      if (end > start) {
        length++;
        const candidates = this.byLength[end - start];
        if (candidates !== undefined) {
          for (const j of candidates) {
            if (text.startsWith(this.queryTerms[j], start)) {
              tfs[j]++;
              break;
            }
          }
        }
      }
      start = end + 1;
    }
    return length;
  }

  /** Counts the query terms of an ASCII text into `tfs` and returns its term count (-1: not ASCII). */
  private countAscii(text: string, tfs: Float64Array): number {
    tfs.fill(0);
    let length = 0;
    let start = -1;
    for (let i = 0; i <= text.length; i++) {
      const c = i < text.length ? text.charCodeAt(i) : 32;
      if (c >= 128) return -1;
      if (isAsciiWordChar(c)) {
        if (start < 0) start = i;
      } else if (start >= 0) {
        // An ASCII word's bytes are its characters; one too long is no keyword (isKeywordTerm).
        if (i - start <= MAX_KEYWORD_TERM_BYTES) {
          length++;
          this.countWord(text, start, i, tfs);
        }
        start = -1;
      }
    }
    return length;
  }

  private countWord(text: string, start: number, end: number, tfs: Float64Array): void {
    const candidates = this.byLength[end - start];
    if (candidates === undefined) return;
    for (const j of candidates) {
      const term = this.queryTerms[j];
      let same = true;
      for (let x = 0; x < term.length && same; x++) {
        const c = text.charCodeAt(start + x);
        same = (c >= 65 && c <= 90 ? c + 32 : c) === term.charCodeAt(x);
      }
      if (same) {
        tfs[j]++;
        return;
      }
    }
  }
}
