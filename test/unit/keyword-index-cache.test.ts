import { describe, expect, it } from 'vitest';
import { KeywordIndex } from '../../src/adapters/storage/json/keyword-index.js';
import { bm25OfText, distinctTerms, selectiveTerms } from '../../src/core/bm25.js';

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
