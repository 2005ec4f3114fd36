import { describe, expect, it } from 'vitest';
import { KeywordIndex } from '../../src/adapters/storage/json/keyword-index.js';
import { bm25OfText, distinctTerms, selectiveTerms } from '../../src/core/bm25.js';
import { WorkBudget } from '../../src/core/slices.js';

/**
 * The JSON keyword index keeps each posting's BM25 contributions between queries
 * (adapters/storage/json/keyword-index.ts). Whatever learns, re-learns and deletes come between
 * two queries, the answer must be the one an index built from scratch on the same texts gives,
 * score for score: the cache may save work, never change a result.
 */
const TASKS = [
  'parse a csv file in python', 'sum a csv column', 'resize png images', 'parse json logs',
  'merge two csv files by key', 'stream json lines from s3', 'compress log files', 'csv to json converter',
];
const QUERIES = ['parse csv', 'json logs from s3', 'csv files', 'resize images', 'compress'];

function fresh(docs: Map<string, string>): KeywordIndex {
  const index = new KeywordIndex();
  for (const [id, task] of docs) index.set(id, task);
  return index;
}

function answers(index: KeywordIndex): unknown[] {
  return QUERIES.map((q) => index.top(distinctTerms(q), 3));
}

describe('JSON keyword index: cached BM25 contributions', () => {
  it('answers after every change exactly as an index rebuilt from the same texts', () => {
    const docs = new Map(TASKS.map((t, i) => [`p${i}`, t]));
    const index = fresh(docs);
    const changes: [string, string | null][] = [
      ['p8', 'parse csv quickly'], ['p1', null], ['p2', 'resize and crop images'], ['p9', 'json logs'], ['p0', null], ['p1', 'sum csv'],
    ];
    expect(answers(index)).toEqual(answers(fresh(docs)));
    for (const [id, task] of changes) {
      answers(index); // fills the cache before the change
      if (task === null) {
        index.remove(id);
        docs.delete(id);
      } else {
        index.set(id, task);
        docs.set(id, task);
      }
      expect(answers(index)).toEqual(answers(fresh(docs)));
    }
  });

  it('scores each hit with BM25 over the selective query terms', () => {
    const docs = new Map(TASKS.map((t, i) => [`p${i}`, t]));
    const index = fresh(docs);
    for (const q of QUERIES) {
      const terms = distinctTerms(q);
      const stats = index.stats(terms);
      for (const hit of index.top(terms, 3)) expect(hit.score).toBe(bm25OfText(selectiveTerms(terms, stats), docs.get(hit.id)!, stats));
    }
  });
});

describe('JSON keyword index: topInSlices', () => {
  it("gives top's hits and scores (unordered), pausing between slices, filtered or not", async () => {
    const index = new KeywordIndex();
    const words = ['parse', 'csv', 'json', 'logs', 'resize', 'images', 'merge', 'files', 'stream', 'lines'];
    // Many equal scores: ties are broken by id, the same way in both.
    for (let i = 0; i < 3_000; i++) index.set(`p${String(i).padStart(5, '0')}`, `${words[i % 10]} ${words[(i * 7) % 10]} ${words[(i * 3) % 10]} item`);
    let pauses = 0;
    const budget = new WorkBudget(async () => {
      pauses++;
    }, 32);
    const byId = (hits: { id: string; score: number }[]) => [...hits].sort((a, b) => (a.id < b.id ? -1 : 1));
    const even = (id: string) => Number(id.slice(1)) % 2 === 0;
    for (const query of ['parse csv', 'json logs files', 'resize']) {
      const terms = distinctTerms(query);
      for (const k of [5, 300, 2_500, 10_000]) {
        expect(byId(await index.topInSlices(terms, k, undefined, budget))).toEqual(byId(index.top(terms, k, undefined, false)));
        expect(byId(await index.topInSlices(terms, k, even, budget))).toEqual(byId(index.top(terms, k, even, false)));
      }
    }
    expect(pauses).toBeGreaterThan(50);
  });
});
