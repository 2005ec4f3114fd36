import { describe, expect, it } from 'vitest';
import {
  calibrateThresholds, distribution, measure, outcome, thresholdExcluding, type LabelledVectors,
} from '../../src/core/calibration.js';

/** A unit vector in 2-d at `cos` to the x axis, so its cosine with [1, 0] is exactly `cos`. */
function at(cos: number): Float32Array {
  return new Float32Array([cos, Math.sqrt(Math.max(0, 1 - cos * cos))]);
}

describe('thresholdExcluding', () => {
  it('keeps all but floor(rate × n) values below the threshold, on a grid of hundredths', () => {
    // 20 values, rate 5% → 1 may reach it; the 2nd highest (0.81) must not: threshold 0.82.
    const values = [0.9, 0.81, ...Array.from({ length: 18 }, (_, i) => 0.3 + i * 0.01)];
    expect(thresholdExcluding(values, 0.05)).toBe(0.82);
    // Rate 0 → nothing may reach it: just above the maximum.
    expect(thresholdExcluding(values, 0)).toBe(0.91);
  });

  it('lands strictly above a value that sits exactly on the grid', () => {
    expect(thresholdExcluding([0.29, 0.1], 0)).toBe(0.3);
    expect(thresholdExcluding([0.7], 0)).toBe(0.71);
  });

  it('cannot go above 1, and needs no threshold when every value may pass', () => {
    expect(thresholdExcluding([1, 0.5], 0)).toBe(1);
    expect(thresholdExcluding([0.5, 0.4], 1)).toBe(0);
    expect(thresholdExcluding([], 0.05)).toBe(0);
  });
});

describe('measure and calibrate (a case computed by hand)', () => {
  // Stored: cluster 0 at the x axis, cluster 1 at the y axis (orthogonal).
  const x = new Float32Array([1, 0]);
  const y = new Float32Array([0, 1]);
  const set: LabelledVectors = {
    stored: [{ cluster: 0, vector: x }, { cluster: 1, vector: y }],
    queries: [
      { cluster: 0, vector: at(0.95) }, // own 0.95, other ≈ 0.31 → correct
      { cluster: 0, vector: at(0.8) }, // own 0.80, other 0.60 → correct
      { cluster: 0, vector: at(0.6) }, // own 0.60, other 0.80 → wrong cluster first
    ],
    lookalikes: [{ cluster: 0, vector: at(0.9) }, { cluster: 0, vector: at(0.85) }],
    unrelated: [at(0.5), at(0.4), at(0.3)],
  };
  const m = measure(set);

  it('measures true, unrelated and lookalike similarities and precision@1', () => {
    expect(m.trueMatch.map((v) => Number(v.toFixed(6)))).toEqual([0.95, 0.8, 0.6]);
    // Unrelated: best over all stored; at(0.5) is at 0.866 to y, at(0.4) 0.917, at(0.3) 0.954.
    expect(m.unrelated.map((v) => Number(v.toFixed(3)))).toEqual([0.866, 0.917, 0.954]);
    expect(m.lookalike.map((v) => Number(v.toFixed(6)))).toEqual([0.9, 0.85]);
    expect(m.top1Correct).toBe(2);
  });

  it('derives thresholds that keep unrelated out of adapt and lookalikes out of duplicate', () => {
    // rate 0 → adapt just above 0.954 (0.96); duplicate just above 0.9 (0.91) → raised to adapt.
    expect(calibrateThresholds(m, 0, 0.92)).toEqual({ adapt: 0.96, duplicate: 0.96 });
    // rate 0.5 → 1 of 3 unrelated may pass: above 0.917 → 0.92; 1 of 2 lookalikes: above 0.85 → 0.86 → raised to 0.92.
    expect(calibrateThresholds(m, 0.5, 0.92)).toEqual({ adapt: 0.92, duplicate: 0.92 });
    // Without lookalikes the fallback duplicate stands.
    expect(calibrateThresholds({ ...m, lookalike: [] }, 0.5, 0.97)).toEqual({ adapt: 0.92, duplicate: 0.97 });
  });

  it('reports how a set of thresholds treats each group', () => {
    const o = outcome(m, { duplicate: 0.88, adapt: 0.7 });
    expect(o.unrelatedAtAdapt).toEqual({ count: 3, of: 3, share: 1 });
    expect(o.lookalikesAtDuplicate).toEqual({ count: 1, of: 2, share: 0.5 });
    expect(o.lookalikesAtAdapt).toEqual({ count: 2, of: 2, share: 1 });
    expect(o.trueAtDuplicate).toEqual({ count: 1, of: 3, share: 1 / 3 });
    expect(o.trueAtAdapt).toEqual({ count: 2, of: 3, share: 2 / 3 });
  });

  it('summarises a distribution with p10/p50/p90/max', () => {
    expect(distribution([0.1, 0.2, 0.3, 0.4, 0.5])).toEqual({ n: 5, p10: 0.14, p50: 0.3, p90: 0.46, max: 0.5 });
    expect(distribution([])).toEqual({ n: 0, p10: null, p50: null, p90: null, max: null });
  });
});
