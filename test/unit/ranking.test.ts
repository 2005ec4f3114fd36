import { describe, expect, it } from 'vitest';
import { rankCandidates } from '../../src/core/ranking.js';
import type { RecallCandidate } from '../../src/core/types.js';

const cand = (
  id: string, similarity: number, recent_evals: number[] = [], task = `distinct task ${id}`, updated_at = '2025-01-01T00:00:00.000Z',
): RecallCandidate => ({ id, task, similarity, recent_evals, updated_at });
const ids = (xs: { id: string }[]) => xs.map((x) => x.id);
const ALL = { evalWeighted: true, deduplicate: true, keep: Infinity };

describe('rankCandidates', () => {
  it('scores by similarity × quality factor of the newest evals, and re-orders by that score', () => {
    // a: 0.9 × (0.5 + 0.05 × 2) = 0.54; b: 0.8 × (0.5 + 0.05 × 10) = 0.8; c: no evals → 0.7 × 0.75 = 0.525
    const ranked = rankCandidates([cand('a', 0.9, [2]), cand('b', 0.8, [10]), cand('c', 0.7)], ALL);
    expect(ids(ranked)).toEqual(['b', 'a', 'c']);
    expect(ranked.map((r) => r.score)).toEqual([expect.closeTo(0.8, 9), expect.closeTo(0.54, 9), expect.closeTo(0.525, 9)]);
    // The median of the window, not the newest value alone: [9, 1, 2] → median 2.
    expect(rankCandidates([cand('m', 1, [9, 1, 2])], ALL)[0].score).toBeCloseTo(0.6, 9);
  });

  it('without eval weighting the score is the similarity and the storage order is kept', () => {
    const ranked = rankCandidates([cand('a', 0.9, [0]), cand('b', 0.8, [10]), cand('c', 0.8, [10])], { ...ALL, evalWeighted: false });
    expect(ids(ranked)).toEqual(['a', 'b', 'c']);
    expect(ranked.map((r) => r.score)).toEqual([0.9, 0.8, 0.8]);
  });

  it('equal scores keep the order they came in (stable)', () => {
    const ranked = rankCandidates([cand('x', 0.5, [5]), cand('y', 0.5, [5]), cand('z', 0.5, [5])], ALL);
    expect(ids(ranked)).toEqual(['x', 'y', 'z']);
  });

  it('collapses near-duplicate tasks after ranking, keeping the best-ranked member', () => {
    const task = 'parse the csv file into json records';
    const ranked = rankCandidates(
      [cand('closer-but-poor', 0.95, [0], task), cand('other', 0.6, [], 'write a haiku'), cand('better', 0.9, [10], `${task}!`)],
      ALL,
    );
    expect(ids(ranked)).toEqual(['better', 'other']);
    const kept = rankCandidates([cand('a', 0.9, [], task), cand('b', 0.8, [], task)], { ...ALL, deduplicate: false });
    expect(ids(kept)).toEqual(['a', 'b']);
  });

  it('stops deduplicating once `keep` survivors exist', () => {
    const many = Array.from({ length: 10 }, (_, i) => cand(`c${i}`, 1 - i / 100));
    expect(ids(rankCandidates(many, { ...ALL, keep: 3 }))).toEqual(['c0', 'c1', 'c2']);
  });
});
