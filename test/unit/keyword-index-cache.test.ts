import { describe, expect, it } from 'vitest';
import { KeywordIndex } from '../../src/adapters/storage/json/engine/keyword-index.js';
import { bm25OfText, distinctTerms, selectiveTerms } from '../../src/core/bm25.js';
import { WorkBudget } from '../../src/core/slices.js';

/**
 * The JSON keyword index keeps each posting's BM25 contributions between queries
 * (adapters/storage/json/engine/keyword-index.ts). Whatever learns, re-learns and deletes come between
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

/** A learn (text) or a delete (null), made to the index and to the texts it should hold. */
function applyChange(index: KeywordIndex, docs: Map<string, string>, id: string, task: string | null): void {
  if (task === null) {
    index.remove(id);
    docs.delete(id);
  } else {
    index.set(id, task);
    docs.set(id, task);
  }
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
      applyChange(index, docs, id, task);
      expect(answers(index)).toEqual(answers(fresh(docs)));
    }
  });

  it("stats: one query's repeated asks share one answer until the index changes, then get the new figures", () => {
    const docs = new Map(TASKS.map((t, i) => [`p${i}`, t]));
    const index = fresh(docs);
    const terms = distinctTerms('parse csv json logs');
    const first = index.stats(terms);
    expect(index.stats(terms)).toBe(first);
    // Another array of the same terms is worked out again (same figures).
    expect(index.stats([...terms])).not.toBe(first);
    expect(index.stats([...terms])).toEqual(first);
    const changes: [string, string | null][] = [['p8', 'parse csv quickly'], ['p1', null], ['p3', 'parse json logs'], ['p3', 'json only']];
    for (const [id, task] of changes) {
      index.stats(terms);
      applyChange(index, docs, id, task);
      expect(index.stats(terms)).toEqual(fresh(docs).stats(terms));
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
    // 80 words, three per task (7 and 3 are prime to 80): each in at most 113 of the 3,000
    // tasks, under the selective-term cap (core/bm25.ts), so every query word finds candidates.
    const named = ['parse', 'csv', 'json', 'logs', 'resize', 'images', 'merge', 'files', 'stream', 'lines'];
    const words = [...named, ...Array.from({ length: 70 }, (_, n) => `extra${n}`)];
    // Many equal scores: ties are broken by id, the same way in both.
    for (let i = 0; i < 3_000; i++) index.set(`p${String(i).padStart(5, '0')}`, `${words[i % 80]} ${words[(i * 7) % 80]} ${words[(i * 3) % 80]} item`);
    let pauses = 0;
    const budget = new WorkBudget(async () => {
      pauses++;
    }, 32);
    const byId = (hits: { id: string; score: number }[]) => [...hits].sort((a, b) => (a.id < b.id ? -1 : 1));
    const even = (id: string) => Number(id.slice(1)) % 2 === 0;
    for (const query of ['parse csv', 'json logs files', 'resize']) {
      const terms = distinctTerms(query);
      expect(index.top(terms, 1, undefined, false)).toHaveLength(1);
      for (const k of [5, 300, 2_500, 10_000]) {
        expect(byId(await index.topInSlices(terms, k, undefined, budget))).toEqual(byId(index.top(terms, k, undefined, false)));
        expect(byId(await index.topInSlices(terms, k, even, budget))).toEqual(byId(index.top(terms, k, even, false)));
      }
    }
    expect(pauses).toBeGreaterThan(50);
  });
});

/**
 * top() keeps its k best with a heap, scoring either through a touched list (few postings) or
 * densely over every slot with a floor (postings covering much of the project). Whichever path
 * a query takes, its hits must be the first k of every scored document in order (score, then
 * id), filter applied: the same as asking for all of them and cutting.
 */
describe('JSON keyword index: top k', () => {
  // Three disjoint word lists, each word in 1/7, 1/12 or 1/11 of the tasks: all selective.
  const VERBS = ['parse', 'merge', 'resize', 'stream', 'sum', 'sort', 'index'];
  const NOUNS = ['csv', 'json', 'logs', 'images', 'files', 'rows', 'lines', 'events', 'tickets', 'carts', 'clips', 'pdfs'];
  const PLACES = ['s3', 'disk', 'ftp', 'redis', 'kafka', 'queue', 'sheet', 'api', 'cron', 'table', 'topic'];

  function project(): KeywordIndex {
    const index = new KeywordIndex();
    for (let i = 0; i < 600; i++) {
      // Repeated word patterns give many equal scores (ties broken by id); a few rare words.
      const words = [VERBS[i % 7], NOUNS[(i * 5) % 12], PLACES[(i * 7) % 11]];
      if (i % 97 === 0) words.push('zebra');
      index.set(`p${String((i * 7919) % 1000).padStart(4, '0')}`, words.join(' '));
    }
    // Deleted documents leave free slots behind.
    for (let i = 0; i < 600; i += 13) index.remove(`p${String((i * 7919) % 1000).padStart(4, '0')}`);
    return index;
  }

  it('gives the first k of the full ordering, on dense and sparse queries, with and without a filter', () => {
    const index = project();
    const accept = (id: string) => id.endsWith('1') || id.endsWith('4') || id.endsWith('8');
    // Dense: 'parse merge resize', 'parse csv s3 sort'; sparse: 'zebra', 'csv', 'zebra kafka'.
    for (const q of ['parse merge resize', 'parse csv s3 sort', 'zebra', 'csv', 'zebra kafka', 'nothing here']) {
      const terms = distinctTerms(q);
      const all = index.top(terms, 10_000);
      for (const k of [1, 3, 10, 25]) {
        expect(index.top(terms, k)).toEqual(all.slice(0, k));
        expect(index.top(terms, k, accept)).toEqual(all.filter((h) => accept(h.id)).slice(0, k));
        const unordered = index.top(terms, k, undefined, false);
        expect(unordered.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))).toEqual(all.slice(0, k));
      }
    }
  });
});
