import { describe, expect, it } from 'vitest';
import { VectorMean } from '../../src/adapters/storage/json/engine/vector-mean.js';
import { dot, unitVector } from '../../src/core/hybrid.js';

/**
 * VectorMean keeps the mean, its norm² and each pattern's dot with it between changes
 * (adapters/storage/json/engine/vector-mean.ts): after any add, remove or reset, every answer must be
 * the one computed afresh from the new mean.
 */
describe('JSON vector mean: kept mean dots', () => {
  const v = (...xs: number[]) => unitVector(new Float32Array(xs));
  const a = v(1, 0, 0);
  const b = v(0, 1, 0);
  const c = v(1, 1, 1);

  function expectFresh(mean: VectorMean, vectors: Record<string, Float32Array>): void {
    const m = mean.mean(3)!;
    expect(mean.norm2()).toBe(dot(m, m));
    for (const [id, u] of Object.entries(vectors)) expect(mean.meanDot(id, u)).toBe(dot(u, m));
  }

  it('answers as a fresh computation after every change', () => {
    const mean = new VectorMean();
    mean.add(a);
    mean.add(b);
    expectFresh(mean, { a, b, c });
    expect(mean.meanDot('c', c)).toBeCloseTo(dot(c, v(1, 1, 0)) / Math.SQRT2, 6);
    mean.add(c);
    expectFresh(mean, { a, b, c });
    mean.remove(a);
    expectFresh(mean, { a, b, c });
    // The pattern "b" gets another vector: remove the old, add the new (as ScopeState does).
    mean.remove(b);
    mean.add(a);
    expectFresh(mean, { b: a, c });
    mean.reset();
    expect(mean.mean(3)).toBeNull();
    mean.add(c);
    expectFresh(mean, { c });
    expect(mean.meanDot('c', c)).toBeCloseTo(1, 6);
  });
});
