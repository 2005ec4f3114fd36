import { describe, expect, it } from 'vitest';
import { dedupeByTask, MAX_WIDENED_CANDIDATES, NearDuplicateFilter, nearDuplicateSets, widenedFetch } from '../../src/core/dedup.js';
import { jaccardOfSets, tokenJaccard } from '../../src/core/text.js';

interface Item {
  id: string;
  task: string;
}
const item = (id: string, task: string): Item => ({ id, task });
const ids = (xs: Item[]) => xs.map((x) => x.id);
const taskOf = (x: Item) => x.task;

describe('dedupeByTask', () => {
  it('keeps distinct tasks and their order', () => {
    const ranked = [item('a', 'parse csv files'), item('b', 'send an email'), item('c', 'resize images')];
    expect(ids(dedupeByTask(ranked, taskOf))).toEqual(['a', 'b', 'c']);
  });

  it('keeps the best-ranked (earliest) member of a near-duplicate group', () => {
    const ranked = [
      item('best', 'parse the csv file into json'),
      item('other', 'write a haiku'),
      item('dup', 'Parse the CSV file into JSON!'),
    ];
    expect(ids(dedupeByTask(ranked, taskOf))).toEqual(['best', 'other']);
  });

  it('compares with kept items only: C, not close to the kept A, stays even though the dropped B is close to both', () => {
    // A∩B: 8 of 10 words (0.8 > 0.7); B∩C: 8 of 10 (0.8); A∩C: 7 of 11 (≈0.64 ≤ 0.7)
    const a = 'w1 w2 w3 w4 w5 w6 w7 w8 a1';
    const b = 'w1 w2 w3 w4 w5 w6 w7 w8 b1';
    const c = 'w1 w2 w3 w4 w5 w6 w7 c1 b1';
    expect(ids(dedupeByTask([item('A', a), item('x', 'unrelated'), item('B', b), item('C', c)], taskOf))).toEqual(['A', 'x', 'C']);
    // The better-ranked of two near-duplicates wins whichever comes later.
    expect(ids(dedupeByTask([item('A', a), item('x', 'unrelated'), item('C', c), item('B', b)], taskOf))).toEqual(['A', 'x', 'C']);
  });

  it('survivors are pairwise not near-duplicates, and every dropped item is one of a better-ranked survivor', () => {
    const words = ['parse', 'csv', 'file', 'json', 'write', 'read', 'sort', 'rows', 'by', 'date', 'price', 'column'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
    const ranked = Array.from({ length: 300 }, (_, i) => item(String(i), Array.from({ length: 4 + (next() % 5) }, () => words[next() % words.length]).join(' ')));
    const kept = dedupeByTask(ranked, taskOf);
    for (const [i, a] of kept.entries()) for (const b of kept.slice(i + 1)) expect(tokenJaccard(a.task, b.task)).toBeLessThanOrEqual(0.7);
    const keptIds = new Set(ids(kept));
    for (const [i, x] of ranked.entries()) {
      if (keptIds.has(x.id)) continue;
      expect(ranked.slice(0, i).some((y) => keptIds.has(y.id) && tokenJaccard(x.task, y.task) > 0.7), x.id).toBe(true);
    }
  });

  it('does at most (items offered) × (items kept) comparisons: 10,000 near-identical tasks cost 10,000, not 50 million', () => {
    const filter = new NearDuplicateFilter<Item>(taskOf);
    for (let i = 0; i < 10_000; i++) filter.offer(item(String(i), `resize every jpeg image in the uploads folder to width ${i} pixels`));
    expect(filter.size).toBe(1);
    expect(filter.comparisons).toBeLessThanOrEqual(10_000);
    // Distinct tasks, a page of 50: each of the first 50 compared with those before it, no more.
    const page = dedupeByTask(Array.from({ length: 10_000 }, (_, i) => item(String(i), `task number ${i} unique words w${i} v${i}`)), taskOf, 0.7, 50);
    expect(page).toHaveLength(50);
  });

  it('nearDuplicateSets (stopping early) agrees with Jaccard > threshold on every pair', () => {
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
    const sets = Array.from({ length: 120 }, () => new Set(Array.from({ length: next() % 12 }, () => `t${next() % 14}`)));
    for (const threshold of [0.4, 0.7, 0.9]) {
      for (const a of sets) for (const b of sets) expect(nearDuplicateSets(a, b, threshold)).toBe(jaccardOfSets(a, b) > threshold);
    }
  });

  it('widening stops at a fixed cap (or at a deep page\'s first fetch)', () => {
    const steps: number[] = [];
    for (let k: number | null = 21; k !== null; k = widenedFetch(k, 21)) steps.push(k);
    expect(steps).toEqual([21, 84, 336, 1344, MAX_WIDENED_CANDIDATES]);
    expect(widenedFetch(30_000, 30_000)).toBeNull();
  });

  it('uses a strict > threshold: exactly 0.7 is not a duplicate', () => {
    // 7 shared of 10 total = 0.7
    const a = 'w1 w2 w3 w4 w5 w6 w7 a1 a2 a3';
    const b = 'w1 w2 w3 w4 w5 w6 w7';
    expect(ids(dedupeByTask([item('a', a), item('b', b)], taskOf))).toEqual(['a', 'b']);
  });

  it('honours a custom threshold', () => {
    const ranked = [item('a', 'sort a list'), item('b', 'sort the list')]; // Jaccard 0.5
    expect(ids(dedupeByTask(ranked, taskOf))).toEqual(['a', 'b']);
    expect(ids(dedupeByTask(ranked, taskOf, 0.4))).toEqual(['a']);
  });

  it('never groups word-less tasks (Jaccard 0)', () => {
    const ranked = [item('a', '!!!'), item('b', '???')];
    expect(ids(dedupeByTask(ranked, taskOf))).toEqual(['a', 'b']);
  });

  it('handles an empty list and does not mutate the input', () => {
    expect(dedupeByTask([], taskOf)).toEqual([]);
    const ranked = [item('a', 'same words'), item('b', 'same words')];
    dedupeByTask(ranked, taskOf);
    expect(ids(ranked)).toEqual(['a', 'b']);
  });

  it('stops once maxKept groups exist, keeping duplicates of those groups out', () => {
    const ranked = [
      item('a', 'parse a csv file'),
      item('b', 'parse a csv file now'),
      item('c', 'deploy the web server'),
      item('d', 'train a small model'),
      item('e', 'resize every image'),
    ];
    expect(ids(dedupeByTask(ranked, taskOf, 0.7, 2))).toEqual(['a', 'c']);
    expect(ids(dedupeByTask(ranked, taskOf, 0.7, 3))).toEqual(['a', 'c', 'd']);
    expect(ids(dedupeByTask(ranked, taskOf, 0.7, 99))).toEqual(['a', 'c', 'd', 'e']);
  });
});
