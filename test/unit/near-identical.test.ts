import { describe, expect, it } from 'vitest';
import { NEAR_IDENTICAL_WORDING, sameWording, taskWords } from '../../src/core/near-identical.js';

/** The reference: ordered overlap from a full LCS table. */
function orderedOverlap(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      table[i][j] = a[i - 1] === b[j - 1] ? table[i - 1][j - 1] + 1 : Math.max(table[i - 1][j], table[i][j - 1]);
    }
  }
  const common = table[a.length][b.length];
  return common / (a.length + b.length - common);
}

describe('near-identical wording', () => {
  it('ignores case, spacing and punctuation but not order', () => {
    const task = taskWords('Write a python function to convert octal number to decimal number.');
    expect(sameWording(task, taskWords('write a PYTHON function, to convert octal-number  to decimal number!'))).toBe(true);
    expect(sameWording(task, taskWords('Write a python function to convert decimal number to octal number.'))).toBe(false);
    expect(sameWording(task, [...task].reverse())).toBe(false);
  });

  it('tolerates one added word from 12 words and one changed word from 24, as the unordered rule did', () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`);
    expect(sameWording(words(12), [...words(12), 'please'])).toBe(true);
    expect(sameWording(words(11), [...words(11), 'please'])).toBe(false);
    expect(sameWording(words(24), [...words(23), 'other'])).toBe(true);
    expect(sameWording(words(23), [...words(22), 'other'])).toBe(false);
  });

  it('never calls texts without words near-identical', () => {
    expect(sameWording([], [])).toBe(false);
    expect(sameWording(taskWords('🙂 🙃'), taskWords('🙂 🙃'))).toBe(false);
  });

  it('decides as the full LCS table does, for random sequences of any length and threshold', () => {
    let seed = 3;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let round = 0; round < 3000; round++) {
      const n = 1 + Math.floor(next() * 40);
      const vocabulary = 2 + Math.floor(next() * 6);
      const a = Array.from({ length: n }, () => `t${Math.floor(next() * vocabulary)}`);
      // Mostly small edits of `a`, so both answers come up often.
      const b = a.flatMap((w) => (next() < 0.05 ? [] : next() < 0.05 ? [w, `t${Math.floor(next() * vocabulary)}`] : [w]));
      const threshold = [NEAR_IDENTICAL_WORDING, 0.8, 0.5][round % 3];
      expect(sameWording(a, b, threshold), `${a.join(' ')} | ${b.join(' ')} at ${threshold}`).toBe(orderedOverlap(a, b) >= threshold);
    }
  });

  it('compares long tasks within a band: 5,000 words against a reordered copy stay cheap and correct', () => {
    const long = Array.from({ length: 5000 }, (_, i) => `w${i}`);
    const rotated = [...long.slice(2500), ...long.slice(0, 2500)];
    expect(sameWording(long, rotated)).toBe(false);
    expect(sameWording(long, [...long.slice(0, 4000), 'x', ...long.slice(4000)])).toBe(true);
  });
});
