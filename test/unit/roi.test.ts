import { describe, expect, it } from 'vitest';
import {
  computeRollup, latencyPercentiles, roiScore, summariseLearns, summariseRecalls, windowStart, WINDOW_MS,
} from '../../src/core/roi.js';
import type { RoiEvent } from '../../src/core/types.js';

const NOW = new Date('2025-03-10T12:00:00.000Z');
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();

const learn = (at: string, eval_score: number, stored: boolean, latency_ms?: number): RoiEvent =>
  ({ at, kind: 'learn', eval_score, stored, ...(latency_ms === undefined ? {} : { latency_ms }) });
const recall = (at: string, best_similarity: number | null, best_tier: RoiEvent['best_tier'], latency_ms?: number): RoiEvent =>
  ({ at, kind: 'recall', best_similarity, best_tier, matches: best_tier ? 1 : 0, ...(latency_ms === undefined ? {} : { latency_ms }) });

describe('windows', () => {
  it('ends at now and spans the window length', () => {
    expect(windowStart('hourly', NOW).toISOString()).toBe('2025-03-10T11:00:00.000Z');
    expect(windowStart('daily', NOW).toISOString()).toBe('2025-03-09T12:00:00.000Z');
    expect(windowStart('weekly', NOW).toISOString()).toBe('2025-03-03T12:00:00.000Z');
    expect(WINDOW_MS.weekly).toBe(7 * WINDOW_MS.daily);
  });
});

describe('summaries', () => {
  it('counts recall tiers, hits and mean best similarity (no match counts as 0)', () => {
    const s = summariseRecalls([
      recall(NOW.toISOString(), 0.95, 'duplicate'),
      recall(NOW.toISOString(), 0.8, 'adapt'),
      recall(NOW.toISOString(), 0.3, 'fresh'),
      recall(NOW.toISOString(), null, null),
      learn(NOW.toISOString(), 9, true),
    ]);
    expect(s.count).toBe(4);
    expect(s.hits).toBe(2);
    expect(s.hit_rate).toBe(0.5);
    expect(s.tiers).toEqual({ duplicate: 1, adapt: 1, fresh: 1, none: 1 });
    expect(s.mean_best_similarity).toBeCloseTo((0.95 + 0.8 + 0.3 + 0) / 4, 12);
  });

  it('summarises learns: stored count, mean eval score, success share (>= 5)', () => {
    const s = summariseLearns([learn(NOW.toISOString(), 8, true), learn(NOW.toISOString(), 5, false), learn(NOW.toISOString(), 2, true)]);
    expect(s).toEqual({ count: 3, stored: 2, avg_eval_score: 5, success_rate: 2 / 3 });
  });

  it('reports nulls, not zeros, when there is no data', () => {
    expect(summariseRecalls([])).toMatchObject({ count: 0, hits: 0, hit_rate: null, mean_best_similarity: null });
    expect(summariseLearns([])).toEqual({ count: 0, stored: 0, avg_eval_score: null, success_rate: null });
    expect(latencyPercentiles([])).toEqual({ samples: 0, p50: null, p95: null, p99: null });
  });

  it('interpolates latency percentiles over the events that carry a latency', () => {
    const events = [10, 20, 30, 40, 50].map((ms) => learn(NOW.toISOString(), 7, true, ms));
    events.push(learn(NOW.toISOString(), 7, true));
    const p = latencyPercentiles(events);
    expect(p.samples).toBe(5);
    expect(p.p50).toBe(30);
    expect(p.p95).toBeCloseTo(48, 12); // rank 0.95 × 4 = 3.8 → 40 + 0.8 × 10
    expect(p.p99).toBeCloseTo(49.6, 12);
  });
});

describe('roiScore', () => {
  it('weights reuse 0.4, learn success 0.3, similarity 0.3 on a 0–10 scale', () => {
    const r = summariseRecalls([recall(NOW.toISOString(), 0.9, 'adapt'), recall(NOW.toISOString(), 0.5, 'fresh')]);
    const l = summariseLearns([learn(NOW.toISOString(), 8, true), learn(NOW.toISOString(), 3, true)]);
    // 10 × (0.4 × 0.5 + 0.3 × 0.5 + 0.3 × 0.7) = 5.6
    expect(roiScore(r, l)).toBeCloseTo(5.6, 12);
  });

  it('renormalises over the components that have data', () => {
    const noRecalls = summariseRecalls([]);
    expect(roiScore(noRecalls, summariseLearns([learn(NOW.toISOString(), 9, true), learn(NOW.toISOString(), 1, true)]))).toBeCloseTo(5, 12);
    const r = summariseRecalls([recall(NOW.toISOString(), 1, 'duplicate')]);
    expect(roiScore(r, summariseLearns([]))).toBeCloseTo(10, 12);
    expect(roiScore(noRecalls, summariseLearns([]))).toBe(0);
  });

  it('stays within [0, 10] even for out-of-range inputs', () => {
    const r = summariseRecalls([recall(NOW.toISOString(), 7, 'duplicate')]);
    const l = summariseLearns([learn(NOW.toISOString(), 10, true)]);
    expect(roiScore(r, l)).toBe(10);
    const low = summariseRecalls([recall(NOW.toISOString(), -3, 'fresh')]);
    expect(roiScore(low, summariseLearns([learn(NOW.toISOString(), 0, false)]))).toBe(0);
  });
});

describe('computeRollup', () => {
  it('keeps only events inside [now - window, now]', () => {
    const events = [
      learn(minutesAgo(30), 8, true, 100),
      recall(minutesAgo(10), 0.95, 'duplicate', 20),
      learn(minutesAgo(60), 4, true, 50), // exactly at the window start: inside
      learn(minutesAgo(61), 1, false, 999), // before the hourly window
      recall(new Date(NOW.getTime() + 1000).toISOString(), 0.1, 'fresh', 999), // after now
    ];
    const r = computeRollup('hourly', events, NOW);
    expect(r.window).toBe('hourly');
    expect(r.computed_at).toBe(NOW.toISOString());
    expect(r.since).toBe('2025-03-10T11:00:00.000Z');
    expect(r.event_count).toBe(3);
    expect(r.learn).toEqual({ count: 2, stored: 2, avg_eval_score: 6, success_rate: 0.5 });
    expect(r.recall).toMatchObject({ count: 1, hits: 1, hit_rate: 1, mean_best_similarity: 0.95 });
    expect(r.percentiles).toEqual({ samples: 3, p50: 50, p95: 95, p99: 99 });
    // 10 × (0.4 × 1 + 0.3 × 0.5 + 0.3 × 0.95) = 8.35
    expect(r.roi_score).toBeCloseTo(8.35, 12);

    const daily = computeRollup('daily', events, NOW);
    expect(daily.event_count).toBe(4);
  });
});
