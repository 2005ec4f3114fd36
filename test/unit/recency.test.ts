import { describe, expect, it } from 'vitest';
import { rankCandidates } from '../../src/core/ranking.js';
import { recencyFactor, recencyWeighted } from '../../src/core/recency.js';
import type { RecallCandidate } from '../../src/core/types.js';

const NOW = new Date('2025-06-01T00:00:00.000Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000).toISOString();

describe('recencyFactor', () => {
  it('halves per half-life of age, is 1 at age 0 and for times in the future', () => {
    expect(recencyFactor(daysAgo(0), NOW, 30)).toBe(1);
    expect(recencyFactor(daysAgo(30), NOW, 30)).toBeCloseTo(0.5, 12);
    expect(recencyFactor(daysAgo(60), NOW, 30)).toBeCloseTo(0.25, 12);
    expect(recencyFactor(daysAgo(7), NOW, 7)).toBeCloseTo(0.5, 12);
    expect(recencyFactor(daysAgo(-10), NOW, 30)).toBe(1);
    // Ages in seconds: half a day at a one-day half-life.
    expect(recencyFactor(new Date(NOW.getTime() - 43_200_000).toISOString(), NOW, 1)).toBeCloseTo(Math.SQRT1_2, 12);
  });

  it('score × factor ^ weight; weight 0 changes nothing', () => {
    expect(recencyWeighted(0.8, daysAgo(30), { weight: 1, halfLifeDays: 30, now: NOW })).toBeCloseTo(0.4, 12);
    expect(recencyWeighted(0.8, daysAgo(30), { weight: 0.5, halfLifeDays: 30, now: NOW })).toBeCloseTo(0.8 * Math.SQRT1_2, 12);
    expect(recencyWeighted(0.8, daysAgo(3000), { weight: 0, halfLifeDays: 30, now: NOW })).toBe(0.8);
  });
});

describe('rankCandidates with recency', () => {
  const cand = (id: string, similarity: number, updated_at: string, task = `distinct task ${id}`): RecallCandidate => ({
    id, task, similarity, recent_evals: [], updated_at,
  });
  const base = { evalWeighted: false, deduplicate: true, keep: Infinity };

  it('re-orders by the weighted score and keeps similarity raw', () => {
    const old = cand('old', 0.9, daysAgo(90));
    const fresh = cand('fresh', 0.7, daysAgo(1));
    expect(rankCandidates([old, fresh], base).map((c) => c.id)).toEqual(['old', 'fresh']);
    const ranked = rankCandidates([old, fresh], { ...base, recency: { weight: 1, halfLifeDays: 30, now: NOW } });
    expect(ranked.map((c) => c.id)).toEqual(['fresh', 'old']);
    expect(ranked.map((c) => c.similarity)).toEqual([0.7, 0.9]);
    expect(ranked[1].score).toBeCloseTo(0.9 * 0.125, 12);
    // A long half-life makes the same ages matter little: similarity order again.
    expect(rankCandidates([old, fresh], { ...base, recency: { weight: 1, halfLifeDays: 3650, now: NOW } }).map((c) => c.id)).toEqual(['old', 'fresh']);
  });

  it('applies before dedup, so of two near-duplicate tasks the fresher one is kept', () => {
    const older = cand('a', 0.95, daysAgo(120), 'resize every image in the upload folder');
    const newer = cand('b', 0.9, daysAgo(2), 'resize every image in the upload folder');
    expect(rankCandidates([older, newer], base).map((c) => c.id)).toEqual(['a']);
    expect(rankCandidates([older, newer], { ...base, recency: { weight: 1, halfLifeDays: 30, now: NOW } }).map((c) => c.id)).toEqual(['b']);
  });
});
