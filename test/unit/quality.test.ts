import { describe, expect, it } from 'vitest';
import { qualityFactor } from '../../src/core/quality.js';

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
});
