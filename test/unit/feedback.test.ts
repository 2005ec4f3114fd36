import { describe, expect, it } from 'vitest';
import { WEEK_MS } from '../../src/core/aging.js';
import { addFeedbackSentence, decayClusters, overflow, recurringIssues } from '../../src/core/feedback.js';
import type { FeedbackCluster } from '../../src/core/types.js';

const T0 = '2024-03-01T00:00:00.000Z';
const weeksAfter = (iso: string, w: number) => new Date(Date.parse(iso) + w * WEEK_MS);

function ids(prefix = 'c') {
  let n = 0;
  return () => `${prefix}${++n}`;
}

const cluster = (over: Partial<FeedbackCluster> & { id: string }): FeedbackCluster => ({
  text: 'add input validation',
  count: 2,
  score: 0.6,
  last_seen: T0,
  last_decayed_at: null,
  tasks: [],
  ...over,
});

describe('addFeedbackSentence', () => {
  it('starts a cluster with count 1 and score 0.5', () => {
    const [created] = addFeedbackSentence([], '  Add  input validation. ', 'parse csv', T0, ids());
    expect(created).toEqual({
      id: 'c1',
      text: 'Add input validation.',
      count: 1,
      score: 0.5,
      last_seen: T0,
      last_decayed_at: null,
      tasks: ['parse csv'],
    });
  });

  it('joins a cluster whose representative has Jaccard > 0.4: count+1, score+0.1, last_seen, task', () => {
    const existing = cluster({ id: 'x', text: 'Add input validation for the parser', count: 3, score: 0.7, tasks: ['t1'] });
    const later = '2024-03-02T00:00:00.000Z';
    const changed = addFeedbackSentence([existing], 'add validation of input', 't2', later, ids());
    expect(changed).toHaveLength(1);
    expect(changed[0]).toMatchObject({ id: 'x', text: existing.text, count: 4, last_seen: later, tasks: ['t1', 't2'] });
    expect(changed[0].score).toBeCloseTo(0.8, 10);
    expect(existing.count).toBe(3); // input not mutated
  });

  it('uses a strict > 0.4: exactly 0.4 starts a new cluster', () => {
    // {a b c d e} vs {a b x y}: 2 shared of 7 ≈ 0.29; {a b c} vs {a b d e f}: 2 of 6 ≈ 0.33;
    // {a b} vs {a b c d e}: 2 of 5 = 0.4 exactly
    const existing = cluster({ id: 'x', text: 'alpha beta gamma delta epsilon' });
    expect(addFeedbackSentence([existing], 'alpha beta', null, T0, ids())[0].id).toBe('c1');
    expect(addFeedbackSentence([existing], 'alpha beta gamma', null, T0, ids())[0].id).toBe('x'); // 3/5 = 0.6
  });

  it('joins the FIRST matching cluster in the given order', () => {
    const a = cluster({ id: 'a', text: 'handle empty input lists' });
    const b = cluster({ id: 'b', text: 'handle empty input' });
    expect(addFeedbackSentence([a, b], 'handle empty input', null, T0, ids())[0].id).toBe('a');
    expect(addFeedbackSentence([b, a], 'handle empty input', null, T0, ids())[0].id).toBe('b');
  });

  it('caps the score at 1.0', () => {
    const full = cluster({ id: 'x', score: 0.95 });
    expect(addFeedbackSentence([full], 'add input validation', null, T0, ids())[0].score).toBe(1);
  });

  it('remembers at most 5 distinct tasks, most recent last', () => {
    let c = cluster({ id: 'x', tasks: ['t1', 't2', 't3', 't4', 't5'] });
    c = addFeedbackSentence([c], 'add input validation', 't6', T0, ids())[0];
    expect(c.tasks).toEqual(['t2', 't3', 't4', 't5', 't6']);
    c = addFeedbackSentence([c], 'add input validation', 't3', T0, ids())[0];
    expect(c.tasks).toEqual(['t2', 't4', 't5', 't6', 't3']);
    c = addFeedbackSentence([c], 'add input validation', null, T0, ids())[0];
    expect(c.tasks).toEqual(['t2', 't4', 't5', 't6', 't3']);
  });

  it('ignores a sentence without words', () => {
    expect(addFeedbackSentence([], '  ... ', 't', T0, ids())).toEqual([]);
  });
});

describe('decayClusters', () => {
  it('multiplies by 0.9 per week since last_seen when never decayed, and stamps last_decayed_at', () => {
    const now = weeksAfter(T0, 2);
    const { updated, prunedIds } = decayClusters([cluster({ id: 'x', score: 0.8 })], now);
    expect(prunedIds).toEqual([]);
    expect(updated[0].score).toBeCloseTo(0.8 * 0.81, 10);
    expect(updated[0].last_decayed_at).toBe(now.toISOString());
  });

  it('counts from last_decayed_at when set, so a second run at once changes nothing', () => {
    const decayedAt = weeksAfter(T0, 3).toISOString();
    const now = weeksAfter(T0, 4);
    const [c] = decayClusters([cluster({ id: 'x', score: 0.5, last_decayed_at: decayedAt })], now).updated;
    expect(c.score).toBeCloseTo(0.45, 10);
    expect(decayClusters([c], now).updated[0].score).toBe(c.score);
  });

  it('prunes strictly below 0.15', () => {
    // 0.5 × 0.9^w: w = 11 → 0.157 (kept), w = 12 → 0.141 (pruned)
    const c = cluster({ id: 'x', score: 0.5 });
    expect(decayClusters([c], weeksAfter(T0, 11)).prunedIds).toEqual([]);
    expect(decayClusters([c], weeksAfter(T0, 12))).toEqual({ updated: [], prunedIds: ['x'] });
    expect(decayClusters([cluster({ id: 'y', score: 0.15 })], new Date(T0)).prunedIds).toEqual([]);
  });

  it('does not raise a score for a timestamp in the future', () => {
    const c = cluster({ id: 'x', score: 0.5, last_seen: weeksAfter(T0, 1).toISOString() });
    expect(decayClusters([c], new Date(T0)).updated[0].score).toBe(0.5);
  });
});

describe('recurringIssues', () => {
  const clusters = [
    cluster({ id: 'once', count: 1, score: 1 }),
    cluster({ id: 'low', text: 'Use clearer names', count: 2, score: 0.5, tasks: ['Parse CSV files'] }), // 1.0
    cluster({ id: 'high', text: 'Validate CSV headers', count: 4, score: 0.6 }), // 2.4
    cluster({ id: 'mid', text: 'Add logging', count: 3, score: 0.5, tasks: ['send email'] }), // 1.5
  ];
  it('keeps count ≥ 2 ordered by score × count', () => {
    expect(recurringIssues(clusters).map((c) => c.id)).toEqual(['high', 'mid', 'low']);
  });
  it('filters by task_type in text or tasks, case-insensitively', () => {
    expect(recurringIssues(clusters, { taskType: 'csv' }).map((c) => c.id)).toEqual(['high', 'low']);
    expect(recurringIssues(clusters, { taskType: 'EMAIL' }).map((c) => c.id)).toEqual(['mid']);
    expect(recurringIssues(clusters, { taskType: 'nothing-like-it' })).toEqual([]);
  });
  it('a blank task_type filters nothing', () => {
    expect(recurringIssues(clusters, { taskType: '  ' })).toHaveLength(3);
  });
  it('breaks score × count ties by the most recent last_seen', () => {
    const older = cluster({ id: 'older', last_seen: T0 });
    const newer = cluster({ id: 'newer', last_seen: weeksAfter(T0, 1).toISOString() });
    expect(recurringIssues([older, newer]).map((c) => c.id)).toEqual(['newer', 'older']);
  });
});

describe('overflow', () => {
  it('evicts nothing at or under the limit', () => {
    expect(overflow([cluster({ id: 'a' }), cluster({ id: 'b' })], 2)).toEqual([]);
  });
  it('evicts the lowest score × count first', () => {
    const cs = [
      cluster({ id: 'big', count: 10, score: 0.5 }), // 5
      cluster({ id: 'tiny', count: 1, score: 0.5 }), // 0.5
      cluster({ id: 'small', count: 2, score: 0.5 }), // 1
      cluster({ id: 'mid', count: 3, score: 0.9 }), // 2.7
    ];
    expect(overflow(cs, 2)).toEqual(['small', 'tiny']);
  });
  it('defaults to 500 per scope', () => {
    const many = Array.from({ length: 503 }, (_, i) => cluster({ id: `c${i}`, count: 2, score: i === 7 ? 0.2 : 0.6 }));
    const evicted = overflow(many);
    expect(evicted).toHaveLength(3);
    expect(evicted).toContain('c7');
  });
});
