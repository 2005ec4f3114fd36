import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { distinctTerms, selectiveDocCap } from '../src/core/bm25.js';
import { repoRoot, UsageError } from './args.js';
import { templatedTask, type TaskSource } from './synthetic.js';

/** The benchmarks' corpora of task texts, by name (`--corpus`). */
export const CORPORA = ['templated', 'zipfian'] as const;
export type Corpus = (typeof CORPORA)[number];

/** `--corpus VALUE`, checked. */
export function corpusOption(value: string | undefined): Corpus {
  if (!(CORPORA as readonly string[]).includes(value ?? '')) throw new UsageError(`--corpus: unknown "${value ?? ''}" (allowed: ${CORPORA.join(', ')})`);
  return value as Corpus;
}

/**
 * The zipfian corpus, next to the templated one (synthetic.ts): tasks of 6–14
 * English words drawn by Zipf's law (the r-th word with weight 1/r) from the 3,000 most
 * frequent whole words of the bundled model's WordPiece vocabulary, which lists words roughly
 * by frequency ("the", "and", "was", ...).
 *
 * Why it exists: the cost of the keyword side of hybrid recall is the number of posting rows
 * of a query's selective terms. The templated corpus draws every word from lists of 10–26
 * entries, so every content word sits in 4–10 % of the store: with the per-term cap at 1,000
 * a query read about half a store's worth of posting rows (share 0.52 by `postingShare`);
 * with the cap at 250 or below (125 now, 1.25 % at 10k) none of its words is selective and it
 * reads none. Human-written task text is in between: CoNaLa's rewordings against its titles
 * (../shared/data, the recall issue's set) 0.0155 at the current cap, and this corpus 0.0151
 * at 10k (0.037 and 0.033 at a cap of 250), so it stands for real text.
 */
const VOCABULARY_SIZE = 3_000;
const ZIPF_EXPONENT = 1;
const MIN_WORDS = 6;
const MAX_WORDS = 14;

function vocabulary(): string[] {
  const path = join(repoRoot(), 'models', 'use-lite-static-m2v', 'tokenizer.json');
  const tokenizer = JSON.parse(readFileSync(path, 'utf8')) as { model: { vocab: Record<string, number> } };
  // Object key order is the file's order, which is the vocabulary's id order.
  const words = Object.keys(tokenizer.model.vocab).filter((token) => /^[a-z]{2,12}$/.test(token));
  if (words.length < VOCABULARY_SIZE) throw new Error(`${path}: only ${words.length} whole words, need ${VOCABULARY_SIZE}`);
  return words.slice(0, VOCABULARY_SIZE);
}

/** The zipfian corpus's task source; reads the word list once. */
export function zipfianTasks(): TaskSource {
  const words = vocabulary();
  const cumulative = new Float64Array(words.length);
  let total = 0;
  for (let r = 0; r < words.length; r++) {
    total += (r + 1) ** -ZIPF_EXPONENT;
    cumulative[r] = total;
  }
  const draw = (random: () => number): string => {
    const x = random() * total;
    let lo = 0;
    let hi = words.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo];
  };
  return (random) => {
    const length = MIN_WORDS + Math.floor(random() * (MAX_WORDS - MIN_WORDS + 1));
    const picked = Array.from({ length }, () => draw(random));
    picked[0] = picked[0][0].toUpperCase() + picked[0].slice(1);
    return picked.join(' ');
  };
}

/**
 * The mean, over `queries`, of the summed document share of the query's selective terms: the
 * posting rows the keyword side reads per query, as a share of the store's size. A term counts
 * when it is held by no more than core/bm25.ts's cap and by at most the share of `docs` that
 * cap comes to at 10k patterns: so a small set (CoNaLa's 347 titles, where the cap's floor of
 * 50 is 14 %) is measured by the rule a 10k store applies.
 */
const TEN_K_SHARE = selectiveDocCap(10_000) / 10_000;

export function postingShare(docs: readonly string[], queries: readonly string[]): number {
  const df = new Map<string, number>();
  for (const doc of docs) for (const term of distinctTerms(doc)) df.set(term, (df.get(term) ?? 0) + 1);
  const cap = Math.min(TEN_K_SHARE * docs.length, selectiveDocCap(docs.length));
  let sum = 0;
  for (const query of queries) {
    for (const term of distinctTerms(query)) {
      const count = df.get(term) ?? 0;
      if (count > 0 && count <= cap) sum += count / docs.length;
    }
  }
  return queries.length === 0 ? 0 : sum / queries.length;
}

/** The task source of a corpus by name. */
export function corpusTasks(corpus: Corpus): TaskSource {
  return corpus === 'zipfian' ? zipfianTasks() : templatedTask;
}
