/**
 * Issue 25 row 3: recall's work in bounded slices (core/slices.ts) gives exactly what the
 * one-go functions give (core/ranking.ts rankCandidates, services/recall-hybrid.ts rescore), and
 * never does more than a turn's share of work between two pauses.
 */
import { describe, expect, it } from 'vitest';
import type { HybridCandidate, HybridCandidateSet } from '../../src/core/hybrid.js';
import { rankCandidates, type RankOptions } from '../../src/core/ranking.js';
import { sortInSlices, WorkBudget } from '../../src/core/slices.js';
import type { RecallCandidate } from '../../src/core/types.js';
import { rankInSlices } from '../../src/services/recall-dedup.js';
import { blendInSlices, blendOrder, rescore } from '../../src/services/recall-hybrid.js';

/** A budget whose pauses are counted, with the most work seen between two of them. */
function countingBudget(perTurn: number) {
  const seen = { pauses: 0 };
  const budget = new WorkBudget(async () => {
    seen.pauses++;
  }, perTurn);
  return { budget, seen };
}

/** Deterministic pseudo-random numbers (an LCG), so every run checks the same data. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const WORDS = ['parse', 'csv', 'file', 'sum', 'column', 'resize', 'image', 'retry', 'http'];

function candidates(n: number, seed: number): HybridCandidate[] {
  const next = random(seed);
  return Array.from({ length: n }, (_, i) => {
    // Few distinct values, so ties are common and the tiebreaks decide.
    const cosine = Math.round(next() * 4) / 4;
    const words = Array.from({ length: 3 }, () => WORDS[Math.floor(next() * WORDS.length)]);
    return {
      id: `p${String(1000 - i).padStart(8, '0')}`,
      task: `${words.join(' ')}${i % 3 === 0 ? '' : ` ${i}`}`,
      similarity: Math.max(0, cosine),
      cosine,
      mean_dot: i % 5 === 0 ? null : Math.round(next() * 4) / 8,
      code_terms: i % 2 === 0 ? '' : `def ${words[0]} ${words[2]}`,
      recent_evals: i % 4 === 0 ? [] : [Math.floor(next() * 11), Math.floor(next() * 11)],
      updated_at: new Date(Date.UTC(2025, 0, 1 + (i % 7))).toISOString(),
    };
  });
}

describe('WorkBudget', () => {
  it('runs every range in order and pauses once a turn\'s share is spent, never doing more in between', async () => {
    const { budget, seen } = countingBudget(10);
    const visited: number[] = [];
    let sincePause = 0;
    let most = 0;
    let pauses = 0;
    await budget.forRanges(95, (from, to) => {
      if (seen.pauses !== pauses) {
        pauses = seen.pauses;
        sincePause = 0;
      }
      for (let i = from; i < to; i++) visited.push(i);
      sincePause += to - from;
      most = Math.max(most, sincePause);
    });
    expect(visited).toEqual(Array.from({ length: 95 }, (_, i) => i));
    expect(most).toBe(10);
    expect(seen.pauses).toBe(9);
    // Costlier items: fewer per turn.
    const costly = countingBudget(10);
    const sizes: number[] = [];
    await costly.budget.forRanges(20, (from, to) => sizes.push(to - from), 2);
    expect(Math.max(...sizes)).toBe(5);
  });

  it('shares one count across stages: a stage ending does not give the next one a fresh turn', async () => {
    const { budget, seen } = countingBudget(10);
    await budget.map([1, 2, 3, 4, 5, 6], (x) => x);
    expect(seen.pauses).toBe(0);
    await budget.map([1, 2, 3, 4, 5, 6], (x) => x);
    expect(seen.pauses).toBe(1);
  });
});

describe('sortInSlices', () => {
  it('gives the order of one stable sort of the whole list, however small the slices', async () => {
    const next = random(3);
    const items = Array.from({ length: 500 }, (_, i) => ({ key: Math.floor(next() * 7), i }));
    const expected = [...items].sort((a, b) => a.key - b.key);
    for (const perTurn of [1, 2, 7, 64, 1000]) {
      const { budget } = countingBudget(perTurn);
      const merged = await sortInSlices(items, (a, b) => a.key - b.key, budget);
      const out = [];
      for (let x = merged.next(); x !== undefined; x = merged.next()) out.push(x);
      expect(out).toEqual(expected);
    }
  });
});

describe('recall ranking in slices', () => {
  const recency = { weight: 1, halfLifeDays: 3, now: new Date(Date.UTC(2025, 0, 10)) };
  const options: RankOptions[] = [
    { evalWeighted: false, deduplicate: false, keep: 1000 },
    { evalWeighted: true, deduplicate: false, keep: 17 },
    { evalWeighted: true, deduplicate: true, keep: 12, recency },
    { evalWeighted: false, deduplicate: true, keep: 1000 },
  ];

  it('rankInSlices: the first `keep` of rankCandidates, in the same order', async () => {
    const found: RecallCandidate[] = candidates(300, 11);
    for (const opts of options) {
      const { budget, seen } = countingBudget(16);
      const sliced = await rankInSlices(found, opts, budget);
      expect(sliced.map((c) => c.id)).toEqual(rankCandidates(found, opts).slice(0, opts.keep).map((c) => c.id));
      expect(sliced).toEqual(rankCandidates(found, opts).slice(0, opts.keep));
      expect(seen.pauses).toBeGreaterThan(10);
    }
  });

  it('blendInSlices then rankInSlices (blendOrder on equal scores): the order of rankCandidates(rescore(...))', async () => {
    const terms = ['parse', 'csv', 'column'];
    const stats = { docs: 300, totalTerms: 1200, df: new Map([['parse', 40], ['csv', 80], ['column', 30]]), vectors: 240, query_mean_dot: 0.3, mean_norm2: 0.4 };
    // Shuffled input: the storage's order must not matter.
    const set: HybridCandidateSet = { candidates: candidates(300, 5), stats };
    const unit = new Float32Array([1, 0]);
    for (const queryUnit of [unit, null]) {
      for (const opts of options) {
        const { budget } = countingBudget(16);
        const blended = await blendInSlices(set, 'parse the csv column', queryUnit, terms, 0.65, budget, 1);
        const sliced = await rankInSlices(blended, opts, budget, blendOrder);
        const reference = rankCandidates(rescore(set, 'parse the csv column', queryUnit, terms, 0.65, 1), opts, blendOrder).slice(0, opts.keep);
        expect(sliced).toEqual(reference);
      }
    }
  });
});
