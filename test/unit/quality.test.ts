import { describe, expect, it } from 'vitest';
import { qualityFactor } from '../../src/core/quality.js';
import { median } from '../../src/core/stats.js';

describe('qualityFactor', () => {
  it('is 0.75 without observations', () => expect(qualityFactor([])).toBe(0.75));
  it('is 0.5 + 0.05 × the single observation', () => {
    expect(qualityFactor([8])).toBeCloseTo(0.9, 10);
    expect(qualityFactor([0])).toBe(0.5);
    expect(qualityFactor([10])).toBe(1);
  });
  it('uses the median, so one outlier does not swing it', () => {
    expect(qualityFactor([0, 9, 9])).toBeCloseTo(0.95, 10);
    expect(qualityFactor([2, 4, 6, 8])).toBeCloseTo(0.75, 10);
  });
  it('only the newest five observations count', () => {
    // newest first: median of [10,10,10,0,0] is 10; the older zeros beyond five are ignored
    expect(qualityFactor([10, 10, 10, 0, 0, 0, 0, 0])).toBe(1);
    expect(qualityFactor([0, 0, 0, 10, 10, 10, 10, 10])).toBe(0.5);
  });
  it('stays within [0.5, 1] for out-of-range scores', () => {
    expect(qualityFactor([50])).toBe(1);
    expect(qualityFactor([-5])).toBe(0.5);
  });
  it('ignores non-finite observations', () => {
    expect(qualityFactor([Number.NaN, 6])).toBeCloseTo(0.8, 10);
    expect(qualityFactor([Number.NaN])).toBe(0.75);
  });
  it('equals its definition (the first five finite observations, clamped, their median) to the last bit', () => {
    const definition = (xs: number[]) => {
      const window = xs.filter((x) => Number.isFinite(x)).slice(0, 5).map((x) => Math.max(0, Math.min(10, x)));
      return window.length === 0 ? 0.75 : Math.max(0.5, Math.min(1, 0.5 + 0.05 * median(window)));
    };
    const values = [Number.NaN, Infinity, -Infinity, -0, 0, 0.1, 3.3, 7.77, 10, 12, -2, 5, 5];
    let seed = 7;
    const next = () => (seed = (seed * 16807) % 2147483647);
    for (let n = 0; n < 2000; n++) {
      const xs = Array.from({ length: next() % 10 }, () => values[next() % values.length]);
      expect(Object.is(qualityFactor(xs), definition(xs)), JSON.stringify(xs)).toBe(true);
    }
  });
});
