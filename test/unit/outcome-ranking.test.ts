import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OUTCOME_RANKING, EXACT_WORDING_MOVE, failedOnThisWording, failureWeight, MAX_LESSONS, outcomeAdjustments, querySimilarity,
  type OutcomeQuery,
} from '../../src/core/outcome-ranking.js';
import { centeredCosine } from '../../src/core/hybrid.js';
import type { OutcomeEvidence, QuantisedVector } from '../../src/core/outcome-types.js';

/** A unit vector at `angle` radians from the x axis, in 2 dimensions. */
const at = (angle: number) => Float32Array.from([Math.cos(angle), Math.sin(angle)]);
const quantise = (v: Float32Array): QuantisedVector => {
  const scale = Math.max(...Array.from(v, Math.abs));
  return { values: Int8Array.from(v, (x) => Math.round((x / scale) * 127)), scale };
};

let n = 0;
function evidence(pattern_id: string, passed: boolean, query_normalized: string, vector: Float32Array | null, detail: string | null = null): OutcomeEvidence {
  n++;
  return {
    recall_id: `r${n}`, pattern_key: `key-${pattern_id}`, pattern_id, passed, score: null, detail, source: 'tests',
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), query: query_normalized, query_normalized,
    query_vector: vector ? quantise(vector) : null,
  };
}
const query = (normalized: string, vector: Float32Array | null): OutcomeQuery => ({ normalized, vector, centring: null });

describe('outcome ranking', () => {
  it('a failure lowers the pattern by δ·(c − τ)/(1 − τ) for queries near the failing one, not at all past τ', () => {
    const failing = at(0);
    const ev = new Map([['p', [evidence('p', false, 'count the vowels', failing)]]]);
    // cos 0.85 → weight (0.85 − 0.7)/0.3 = 0.5 → −0.15
    const near = outcomeAdjustments(query('tally vowels', at(Math.acos(0.85))), ev).get('p')!;
    expect(near.local).toBeCloseTo(-0.15, 2);
    expect(near.adjustment).toBeCloseTo(-0.15, 2);
    expect(near.exact).toBeNull();
    expect(near.failures).toEqual([expect.objectContaining({ query: 'count the vowels', similarity: expect.closeTo(0.85, 2) })]);
    const far = outcomeAdjustments(query('sort a list', at(Math.acos(0.6))), ev).get('p')!;
    expect(far.adjustment).toBe(0);
    expect(far.failures).toEqual([]);
  });

  it('takes the nearest failure, not the sum of them', () => {
    const ev = new Map([['p', [
      evidence('p', false, 'a', at(Math.acos(0.8))),
      evidence('p', false, 'b', at(Math.acos(0.9))),
      evidence('p', false, 'c', at(Math.acos(0.9))),
    ]]]);
    const a = outcomeAdjustments(query('q', at(0)), ev).get('p')!;
    expect(a.local).toBeCloseTo(-0.3 * (0.2 / 0.3), 2);
  });

  it('the exact wording: its newest failure moves the pattern strongly down, its newest success strongly up', () => {
    const v = at(0);
    const failed = outcomeAdjustments(query('w', v), new Map([['p', [evidence('p', false, 'w', v)]]])).get('p')!;
    expect(failed.exact).toBe('failed');
    expect(failed.exact_move).toBe(-EXACT_WORDING_MOVE);
    expect(failed.adjustment).toBeLessThanOrEqual(-EXACT_WORDING_MOVE);
    expect(failedOnThisWording(failed)).toBe(true);
    // Newest first: a later success on the same wording replaces the failure.
    const fixed = outcomeAdjustments(query('w', v), new Map([['p', [evidence('p', true, 'w', v), evidence('p', false, 'w', v)]]])).get('p')!;
    expect(fixed.exact).toBe('passed');
    expect(fixed.adjustment).toBeGreaterThan(0);
    expect(failedOnThisWording(fixed)).toBe(false);
  });

  it('a success on another wording raises nothing, however close', () => {
    const ev = new Map([['p', [evidence('p', true, 'other wording', at(0))]]]);
    const a = outcomeAdjustments(query('this wording', at(0.01)), ev).get('p')!;
    expect(a.adjustment).toBe(0);
    expect(a.exact).toBeNull();
  });

  it('a pattern that failed for a lookalike wording is not lowered for its own, distant wording', () => {
    // The lookalike's ask is far in centred space from the pattern's own problem's ask.
    const ev = new Map([['p', [evidence('p', false, 'convert decimal to octal', at(0))]]]);
    const own = outcomeAdjustments(query('convert octal to decimal', at(Math.acos(0.5))), ev).get('p')!;
    expect(own.adjustment).toBe(0);
    expect(failedOnThisWording(own)).toBe(false);
  });

  it('lessons: failures with a detail on similar queries, nearest first, at most three', () => {
    const ev = new Map([['p', [
      evidence('p', false, 'a', at(Math.acos(0.75)), 'assert f(2) == 4 failed'),
      evidence('p', false, 'b', at(Math.acos(0.95)), 'assert f(0) == 0 failed'),
      evidence('p', false, 'c', at(Math.acos(0.9)), null),
      evidence('p', false, 'd', at(Math.acos(0.8)), 'timeout'),
      evidence('p', false, 'e', at(Math.acos(0.85)), 'assert f(1) == 1 failed'),
      evidence('p', false, 'far', at(Math.acos(0.3)), 'unrelated'),
    ]]]);
    const a = outcomeAdjustments(query('q', at(0)), ev).get('p')!;
    expect(a.lessons).toHaveLength(MAX_LESSONS);
    expect(a.lessons.map((l) => l.query)).toEqual(['b', 'e', 'd']);
    expect(a.lessons[0]).toEqual({ detail: 'assert f(0) == 0 failed', at: expect.any(String), similarity: expect.closeTo(0.95, 2), query: 'b' });
  });

  it('a failure on the exact wording is a lesson at similarity 1', () => {
    const v = at(0);
    const a = outcomeAdjustments(query('w', v), new Map([['p', [evidence('p', false, 'w', null, 'wrong answer')]]])).get('p')!;
    expect(a.lessons).toEqual([expect.objectContaining({ detail: 'wrong answer', similarity: 1 })]);
  });

  it('no query vector: only the exact wording counts', () => {
    const ev = new Map([['p', [evidence('p', false, 'near', at(0))]], ['q', [evidence('q', false, 'w', at(0))]]]);
    const out = outcomeAdjustments(query('w', null), ev);
    expect(out.get('p')!.adjustment).toBe(0);
    expect(out.get('q')!.exact).toBe('failed');
  });

  it('candidates without evidence get no entry', () => {
    expect(outcomeAdjustments(query('w', at(0)), new Map([['p', []]])).size).toBe(0);
  });

  it('centring lowers the cosine of queries that share only the project direction', () => {
    const centring = { queryMeanDot: 0.6, meanNorm2: 0.5 };
    const sim = querySimilarity({ normalized: 'x', vector: at(0), centring });
    const raw = 0.8;
    expect(sim(quantise(at(Math.acos(raw))))).toBeCloseTo(centeredCosine(raw, 0.6, 0.6, 0.5), 2);
    expect(sim(quantise(at(0)))).toBeCloseTo(1, 3);
    expect(sim(null)).toBe(0);
    expect(sim({ values: Int8Array.from([1, 2, 3]), scale: 1 })).toBe(0);
  });

  it('failureWeight is 0 up to τ and 1 at the same query', () => {
    const { tau } = DEFAULT_OUTCOME_RANKING;
    expect(failureWeight(tau, tau)).toBe(0);
    expect(failureWeight(0.2, tau)).toBe(0);
    expect(failureWeight(1, tau)).toBe(1);
    expect(failureWeight(Number.NaN, tau)).toBe(0);
  });
});

describe('outcome ranking cost bound', () => {
  it('weighs only the newest failures on other wordings, but finds the exact wording among all', async () => {
    const { MAX_FAILURES_WEIGHED } = await import('../../src/core/outcome-ranking.js');
    const far = Array.from({ length: MAX_FAILURES_WEIGHED }, (_, i) => evidence('p', false, `far ${i}`, at(Math.acos(0.1))));
    const older = [evidence('p', false, 'near but old', at(0)), evidence('p', false, 'w', at(0))];
    const a = outcomeAdjustments(query('w', at(0)), new Map([['p', [...far, ...older]]])).get('p')!;
    expect(a.local).toBe(0);
    expect(a.exact).toBe('failed');
  });
});

describe('outcome parts in text', () => {
  it('the explain line shows the outcome part, and a lesson fits one line', async () => {
    const { explainLine, lessonLine } = await import('../../src/core/recall-explain.js');
    const parts = {
      cosine: 0.9, centered_cosine: 0.8, bm25: 1, blended: 0.7, eval_factor: 1, recency_factor: 1, score: -0.3, tier_rule: 'failed_on_this_wording', tier_threshold: null,
    };
    expect(explainLine(parts)).not.toContain('outcomes');
    expect(explainLine({ ...parts, outcome: { adjustment: -1.3, exact: 'failed', failures: [{}, {}] } }))
      .toContain('outcomes −1.300 (2 similar failures, failed on this wording)');
    const line = lessonLine({ detail: 'assert f(2) == 4\n-> AssertionError', query: 'double a number', similarity: 0.91 });
    expect(line).toBe('failed for "double a number" (similarity 0.91): assert f(2) == 4 -> AssertionError');
    expect(lessonLine({ detail: 'x'.repeat(500), query: 'q', similarity: 1 }).length).toBeLessThan(260);
  });
});
