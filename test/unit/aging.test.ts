import { describe, expect, it } from 'vitest';
import { agedScore, PRUNE_THRESHOLD, shouldPrune, WEEK_MS, weeksSince } from '../../src/core/aging.js';

const created = '2024-01-01T00:00:00.000Z';
const at = (weeks: number) => new Date(Date.parse(created) + weeks * WEEK_MS);

describe('agedScore', () => {
  it('multiplies by 0.98 per week since creation when never aged', () => {
    expect(agedScore({ success_score: 8, created_at: created, last_aged_at: null }, at(1))).toBeCloseTo(7.84, 10);
    expect(agedScore({ success_score: 8, created_at: created, last_aged_at: null }, at(10))).toBeCloseTo(
      8 * 0.98 ** 10,
      10,
    );
  });

  it('counts from last_aged_at when set', () => {
    const p = { success_score: 5, created_at: created, last_aged_at: at(3).toISOString() };
    expect(agedScore(p, at(5))).toBeCloseTo(5 * 0.98 ** 2, 10);
  });

  it('is unchanged when aged again at the same instant', () => {
    const now = at(4);
    expect(agedScore({ success_score: 6, created_at: created, last_aged_at: now.toISOString() }, now)).toBe(6);
  });

  it('uses fractional weeks, so daily runs compound to exactly 0.98^(weeks since creation)', () => {
    let p = { success_score: 9, created_at: created, last_aged_at: null as string | null };
    for (let day = 1; day <= 21; day++) {
      const now = at(day / 7);
      p = { ...p, success_score: agedScore(p, now), last_aged_at: now.toISOString() };
    }
    expect(p.success_score).toBeCloseTo(9 * 0.98 ** 3, 10);
    expect(agedScore({ success_score: 1, created_at: created, last_aged_at: null }, at(0.5))).toBeCloseTo(
      0.98 ** 0.5,
      12,
    );
  });

  it('never raises a score when the timestamp is in the future', () => {
    expect(agedScore({ success_score: 7, created_at: at(2).toISOString(), last_aged_at: null }, at(1))).toBe(7);
  });

  it('rejects an unparsable timestamp instead of guessing', () => {
    expect(() => agedScore({ success_score: 7, created_at: 'yesterday', last_aged_at: null }, at(1))).toThrow(
      RangeError,
    );
  });

  it('weeksSince measures in weeks', () => expect(weeksSince(created, at(2.5))).toBeCloseTo(2.5, 12));
});

describe('shouldPrune', () => {
  it('prunes strictly below 0.1', () => {
    expect(PRUNE_THRESHOLD).toBe(0.1);
    expect(shouldPrune(0.0999)).toBe(true);
    expect(shouldPrune(0)).toBe(true);
    expect(shouldPrune(0.1)).toBe(false);
    expect(shouldPrune(3)).toBe(false);
  });

  it('a score of 1 ages below the threshold after about 114 weeks', () => {
    // 0.98^w < 0.1  ⇔  w > ln(0.1)/ln(0.98) ≈ 113.97
    const p = { success_score: 1, created_at: created, last_aged_at: null };
    expect(shouldPrune(agedScore(p, at(113)))).toBe(false);
    expect(shouldPrune(agedScore(p, at(115)))).toBe(true);
  });
});
