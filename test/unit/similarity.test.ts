import { describe, expect, it } from 'vitest';
import { clampSimilarity, cosine, reuseTier } from '../../src/core/similarity.js';

const v = (...xs: number[]) => new Float32Array(xs);

describe('cosine', () => {
  it('is 1 for the same direction whatever the length', () => expect(cosine(v(1, 2, 3), v(2, 4, 6))).toBeCloseTo(1, 6));
  it('is 0 for orthogonal vectors', () => expect(cosine(v(1, 0), v(0, 5))).toBe(0));
  it('is -1 for opposite vectors', () => expect(cosine(v(1, 1), v(-1, -1))).toBeCloseTo(-1, 6));
  it('matches the textbook value', () => {
    // (1·4 + 2·5 + 3·6) / (√14 · √77)
    expect(cosine(v(1, 2, 3), v(4, 5, 6))).toBeCloseTo(32 / Math.sqrt(14 * 77), 6);
  });
  it('is 0, not NaN, when a vector is all zeros', () => {
    expect(cosine(v(0, 0), v(1, 2))).toBe(0);
    expect(cosine(v(0, 0), v(0, 0))).toBe(0);
  });
  it('never exceeds 1 through float rounding', () => {
    const a = v(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7);
    expect(cosine(a, a)).toBeLessThanOrEqual(1);
  });
  it('throws on a dimension mismatch', () => expect(() => cosine(v(1, 2), v(1, 2, 3))).toThrow(/dimension/));
});

describe('clampSimilarity', () => {
  it('keeps values inside [0, 1]', () => expect(clampSimilarity(0.42)).toBe(0.42));
  it('clamps below and above', () => {
    expect(clampSimilarity(-0.3)).toBe(0);
    expect(clampSimilarity(1.0000001)).toBe(1);
  });
  it('maps NaN to 0', () => expect(clampSimilarity(Number.NaN)).toBe(0));
});

describe('reuseTier', () => {
  const t = { duplicate: 0.92, adapt: 0.7 };
  it('uses inclusive lower bounds', () => {
    expect(reuseTier(0.92, t)).toBe('duplicate');
    expect(reuseTier(0.9199, t)).toBe('adapt');
    expect(reuseTier(0.7, t)).toBe('adapt');
    expect(reuseTier(0.6999, t)).toBe('fresh');
  });
  it('covers the extremes', () => {
    expect(reuseTier(1, t)).toBe('duplicate');
    expect(reuseTier(0, t)).toBe('fresh');
  });
  it('honours configured thresholds', () => {
    const loose = { duplicate: 0.8, adapt: 0.5 };
    expect(reuseTier(0.85, loose)).toBe('duplicate');
    expect(reuseTier(0.55, loose)).toBe('adapt');
    expect(reuseTier(0.45, loose)).toBe('fresh');
  });
});
