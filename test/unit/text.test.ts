import { describe, expect, it } from 'vitest';
import { jaccardOfSets, tokenJaccard, tokenSet } from '../../src/core/text.js';

describe('tokenSet', () => {
  it('lower-cases and splits on every non-letter/digit', () => {
    expect([...tokenSet('Parse CSV-file, then write_JSON! (v2)')].sort()).toEqual(
      ['csv', 'file', 'json', 'parse', 'then', 'v2', 'write'].sort(),
    );
  });
  it('is a set: repeats collapse', () => expect(tokenSet('a a A b')).toEqual(new Set(['a', 'b'])));
  it('keeps non-ASCII letters inside words', () => expect(tokenSet('Café naïve')).toEqual(new Set(['café', 'naïve'])));
  it('gives, in the same order, the tokens of the Unicode expression (its ASCII walk is a shortcut)', () => {
    const reference = (text: string) =>
      new Set(text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').split(' ').filter((t) => t.length > 0));
    const texts = [
      'Parse CSV-file, then write_JSON! (v2)', '  lead and trail  ', 'x', 'A1b2 C3', 'tab\tnew\nline\r\u0000nul~^`{}|',
      'Résumé for Zoë', 'ASCII then é at the end', 'ÀÉÎ upper', '12 345 6.7', '',
    ];
    for (const text of texts) expect([...tokenSet(text)]).toEqual([...reference(text)]);
  });
  it('is empty for blank or punctuation-only text', () => {
    expect(tokenSet('').size).toBe(0);
    expect(tokenSet('  --- !!! ').size).toBe(0);
  });
});

describe('tokenJaccard', () => {
  it('is |A∩B| / |A∪B|', () => {
    // {sort, a, list} vs {sort, the, list}: 2 shared of 4
    expect(tokenJaccard('sort a list', 'sort the list')).toBe(0.5);
  });
  it('is 1 for the same words in another case/order/punctuation', () =>
    expect(tokenJaccard('Sort, the list!', 'the LIST sort')).toBe(1));
  it('is 0 for disjoint texts', () => expect(tokenJaccard('alpha beta', 'gamma delta')).toBe(0));
  it('is 0 when either side is empty, even both', () => {
    expect(tokenJaccard('', 'anything')).toBe(0);
    expect(tokenJaccard('anything', '...')).toBe(0);
    expect(tokenJaccard('', '')).toBe(0);
  });
  it('is symmetric', () => {
    const a = 'fetch the user list from the api';
    const b = 'fetch user profile via api';
    expect(tokenJaccard(a, b)).toBe(tokenJaccard(b, a));
  });
  it('jaccardOfSets agrees with tokenJaccard', () => {
    const a = 'one two three';
    const b = 'two three four five';
    expect(jaccardOfSets(tokenSet(a), tokenSet(b))).toBe(tokenJaccard(a, b));
    expect(tokenJaccard(a, b)).toBeCloseTo(2 / 5, 10);
  });
});
