import { describe, expect, it } from 'vitest';
import { dedupeByTask } from '../../src/core/dedup.js';

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

  it('groups transitively: A~B and B~C drop C even when A and C are not close', () => {
    // A∩B: 8 of 10 words (0.8 > 0.7); B∩C: 8 of 10 (0.8); A∩C: 7 of 11 (≈0.64 ≤ 0.7)
    const a = 'w1 w2 w3 w4 w5 w6 w7 w8 a1';
    const b = 'w1 w2 w3 w4 w5 w6 w7 w8 b1';
    const c = 'w1 w2 w3 w4 w5 w6 w7 c1 b1';
    const ranked = [item('A', a), item('x', 'unrelated'), item('C', c), item('B', b)];
    expect(ids(dedupeByTask(ranked, taskOf))).toEqual(['A', 'x']);
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
