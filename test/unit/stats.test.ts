import { describe, expect, it } from 'vitest';
import { mean, median, percentile, populationVariance } from '../../src/core/stats.js';

describe('mean', () => {
  it('averages', () => expect(mean([1, 2, 3, 6])).toBe(3));
  it('is NaN when empty', () => expect(mean([])).toBeNaN());
});

describe('median', () => {
  it('takes the middle of an odd list regardless of order', () => expect(median([9, 1, 5])).toBe(5));
  it('averages the two middles of an even list', () => expect(median([4, 1, 3, 2])).toBe(2.5));
  it('sorts numerically, not as strings', () => expect(median([10, 9, 100])).toBe(10));
  it('does not reorder the caller array', () => {
    const xs = [3, 1, 2];
    median(xs);
    expect(xs).toEqual([3, 1, 2]);
  });
  it('is NaN when empty', () => expect(median([])).toBeNaN());
});

describe('populationVariance', () => {
  it('divides by n (population), not n-1', () => {
    // mean 5; squared deviations 9,1,1,1,0,0,4,16 = 32; /8 = 4 (sample variance would be 4.571…)
    expect(populationVariance([2, 4, 4, 4, 5, 5, 7, 9])).toBe(4);
  });
  it('is 0 for identical values and for one value', () => {
    expect(populationVariance([7, 7, 7])).toBe(0);
    expect(populationVariance([3])).toBe(0);
  });
  it('is 0 when empty', () => expect(populationVariance([])).toBe(0));
});

describe('percentile', () => {
  const xs = [15, 20, 35, 40, 50];
  it('returns min at 0 and max at 100', () => {
    expect(percentile(xs, 0)).toBe(15);
    expect(percentile(xs, 100)).toBe(50);
  });
  it('returns the median at 50', () => expect(percentile(xs, 50)).toBe(35));
  it('interpolates linearly between ranks', () => {
    // rank = 0.4 × 4 = 1.6 → 20 + 0.6 × (35 − 20) = 29
    expect(percentile(xs, 40)).toBeCloseTo(29, 10);
    expect(percentile([1, 2], 25)).toBeCloseTo(1.25, 10);
  });
  it('handles unsorted input and a single value', () => {
    expect(percentile([50, 15, 40, 20, 35], 100)).toBe(50);
    expect(percentile([4], 99)).toBe(4);
  });
  it('is NaN when empty', () => expect(percentile([], 50)).toBeNaN());
  it('rejects p outside [0, 100]', () => {
    expect(() => percentile(xs, -1)).toThrow(RangeError);
    expect(() => percentile(xs, 101)).toThrow(RangeError);
    expect(() => percentile(xs, Number.NaN)).toThrow(RangeError);
  });
});
