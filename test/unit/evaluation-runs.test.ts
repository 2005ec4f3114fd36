import { describe, expect, it } from 'vitest';
import {
  caseChange, compareCases, defaultCaseId, gateFailuresOf, mergeRepeat, REGRESSION_DELTA, runStatus, summarize, type RepeatableCase, type SummarizedCase,
} from '../../src/core/evaluation-runs.js';
import { ciEnvironment } from '../../src/config/ci-environment.js';

const kase = (case_id: string, median: number | null, passed = true, over: Partial<SummarizedCase> = {}): SummarizedCase => ({
  case_id, name: case_id, median, passed, repeats: 1, pass_rate: null, flaky: null, tokens: null, cost_usd: null, duration_ms: 1, cache_hit: null, ...over,
});

describe('evaluation runs (core)', () => {
  it('a median move within the noise margin is unchanged; beyond it, regressed or improved', () => {
    expect(REGRESSION_DELTA).toBe(1);
    expect(caseChange(kase('a', 8), kase('a', 9), 1)).toBe('unchanged');
    expect(caseChange(kase('a', 7.9), kase('a', 9), 1)).toBe('regressed');
    expect(caseChange(kase('a', 9), kase('a', 7.5), 1)).toBe('improved');
    // Pass → fail is a regression whatever the scores; fail → pass an improvement.
    expect(caseChange(kase('a', 8.9, false), kase('a', 9), 1)).toBe('regressed');
    expect(caseChange(kase('a', 5), kase('a', 5, false), 1)).toBe('improved');
    expect(caseChange(kase('a', null, false), kase('a', null, false), 1)).toBe('unchanged');
  });

  it('compares case by case, regressions first, missing and new by case_id', () => {
    const { cases, counts } = compareCases([kase('b', 6), kase('a', 9), kase('n', 5)], [kase('a', 9), kase('b', 9), kase('m', 8)], 1);
    expect(cases.map((c) => [c.case_id, c.change])).toEqual([['b', 'regressed'], ['m', 'missing'], ['n', 'new'], ['a', 'unchanged']]);
    expect(counts).toEqual({ improved: 0, regressed: 1, unchanged: 1, new: 1, missing: 1 });
    expect(cases[0]).toMatchObject({ baseline_median: 9, median: 6, delta: -3, baseline_passed: true, passed: true });
  });

  it('status: failed beats regressed beats passed; an empty run fails', () => {
    const none = { improved: 0, regressed: 0, unchanged: 2, new: 0, missing: 0 };
    expect(runStatus({ cases: 2, failed: 0 }, none, 0)).toBe('passed');
    expect(runStatus({ cases: 2, failed: 0 }, { ...none, regressed: 1 }, 0)).toBe('regressed');
    expect(runStatus({ cases: 2, failed: 0 }, { ...none, regressed: 1, missing: 1 }, 0)).toBe('failed');
    expect(runStatus({ cases: 2, failed: 1 }, null, 0)).toBe('failed');
    expect(runStatus({ cases: 0, failed: 0 }, null, 0)).toBe('failed');
    expect(runStatus({ cases: 2, failed: 0 }, null, 1)).toBe('failed');
  });

  it('summarizes pass rate, pass^k, flaky, cost, tokens and cache counts (null when nothing reported)', () => {
    expect(summarize([kase('a', 9), kase('b', 3, false)], 12)).toEqual({
      cases: 2, passed: 1, failed: 1, pass_rate: 0.5, pass_hat_k: null, flaky: 0, cost_usd: null, tokens: null, cache_hits: 0, cache_misses: 0, duration_ms: 12,
    });
    const repeated = summarize([
      kase('a', 9, true, { repeats: 3, pass_rate: 1, cost_usd: 0.5, tokens: { input: 10, output: 2 }, cache_hit: true }),
      kase('b', 6, true, { repeats: 3, pass_rate: 2 / 3, flaky: true, cost_usd: 0.25, tokens: { input: 5, output: 1 }, cache_hit: false }),
    ], 0);
    expect(repeated).toMatchObject({ pass_hat_k: 0.5, flaky: 1, cost_usd: 0.75, tokens: { input: 15, output: 3 }, cache_hits: 1, cache_misses: 1 });
  });

  it('merges repeats of a case: counts, the reducer\'s verdict and its reason, sums, cache hit only when every repeat hit', () => {
    // One repeat as the server records it on its own: its gate, tokens, cost, cache use.
    const repeat = (median: number, passed: boolean, hit: boolean, over: Partial<RepeatableCase> = {}): RepeatableCase => ({
      ...kase('c', median, passed, { tokens: { input: 100, output: 10 }, cost_usd: hit ? 0 : 0.001, cache_hit: hit, cache_hits: hit ? 1 : 0, duration_ms: 5 }),
      gate_failures: passed ? [] : [`median score ${median} is below --min-score 5`], failed_evaluators: 0, error: null, ...over,
    });
    const all = { kind: 'all' } as const;
    const two = mergeRepeat(repeat(8, true, true), repeat(2, false, false), all);
    expect(two).toMatchObject({
      repeats: 2, pass_rate: 0.5, flaky: true, passed: false, median: 8, tokens: { input: 200, output: 20 }, cost_usd: 0.001,
      cache_hit: false, cache_hits: 1, duration_ms: 10,
      gate_failures: ['passed 1 of 2 repeats (reducer all)', 'median score 2 is below --min-score 5'],
    });
    const three = mergeRepeat(two, repeat(8, true, false), all);
    expect(three).toMatchObject({ repeats: 3, flaky: true, passed: false, cost_usd: 0.002, cache_hits: 1 });
    expect(three.pass_rate).toBeCloseTo(2 / 3, 12);
    // The reason line is replaced, not repeated, and the repeats' own reasons are kept once.
    expect(three.gate_failures).toEqual(['passed 2 of 3 repeats (reducer all)', 'median score 2 is below --min-score 5']);
    // Majority: 2 of 3 passes; min-rate:0.8 does not.
    const majority = { kind: 'majority' } as const;
    expect(mergeRepeat(mergeRepeat(repeat(8, true, true), repeat(2, false, true), majority), repeat(8, true, true), majority))
      .toMatchObject({ passed: true, gate_failures: [], repeat_failures: ['median score 2 is below --min-score 5'], flaky: true, cache_hit: true, cache_hits: 3 });
    expect(mergeRepeat(mergeRepeat(repeat(8, true, true), repeat(2, false, true), majority), repeat(8, true, true), { kind: 'min-rate', rate: 0.8 }).gate_failures[0])
      .toBe('passed 2 of 3 repeats (reducer min-rate:0.8)');
    // A repeat without a price makes the case's cost unknown; a repeat that could not be evaluated fails the case.
    expect(mergeRepeat(repeat(8, true, false), repeat(8, true, false, { cost_usd: null }), all).cost_usd).toBeNull();
    const broken = mergeRepeat(repeat(8, true, false), { ...repeat(0, false, false), median: null, tokens: null, cost_usd: null, cache_hit: null, cache_hits: null, gate_failures: ['not evaluated: down'], error: 'down' }, all);
    expect(broken).toMatchObject({ repeats: 2, passed: false, error: 'down', pass_rate: null, tokens: { input: 100, output: 10 }, cost_usd: 0.001 });
    expect(broken.gate_failures).toContain('not evaluated: down');
  });

  it('the summary counts cache use per repeat, pass^k over the judged cases, and no cost when a judged case has no price', () => {
    const judged = (id: string, over: Partial<SummarizedCase>) => kase(id, 8, true, { tokens: { input: 1, output: 1 }, cost_usd: 0, ...over });
    const s = summarize([
      judged('a', { repeats: 3, pass_rate: 1, flaky: false, cache_hit: true, cache_hits: 3 }),
      judged('b', { repeats: 3, pass_rate: 2 / 3, flaky: true, passed: false, cache_hit: false, cache_hits: 1 }),
      kase('gone', null, false),
    ], 0);
    expect(s).toMatchObject({ cases: 3, pass_hat_k: 0.5, flaky: 1, cache_hits: 4, cache_misses: 2, cost_usd: 0 });
    expect(summarize([judged('a', { cache_hit: true }), judged('b', { cost_usd: null, cache_hit: false })], 0).cost_usd).toBeNull();
  });

  it('the gate names each reason, evaluator failures included', () => {
    const result = { median_score: 5, variance: 2, high_variance: true, adversarial_detected: true, failed_evaluators: 1 };
    expect(gateFailuresOf(result, { min_score: 6, fail_on_adversarial: true, fail_on_high_variance: true })).toEqual([
      'median score 5 is below --min-score 6', 'hard-coded or faked output detected', 'evaluators disagree (variance 2 > 1.5)', '1 evaluator(s) gave no result',
    ]);
    expect(gateFailuresOf({ ...result, failed_evaluators: 0 }, { min_score: null, fail_on_adversarial: false, fail_on_high_variance: false })).toEqual([]);
  });

  it('a case without an id is named by its task, whitespace folded', () => {
    expect(defaultCaseId('  add   two\nnumbers ')).toBe('add two numbers');
    expect(defaultCaseId(undefined)).toBe('case');
  });
});

describe('CI environment', () => {
  it('reads the provider, commit and branch each CI system sets', () => {
    expect(ciEnvironment({ GITHUB_ACTIONS: 'true', GITHUB_SHA: 'abc', GITHUB_REF_NAME: '42/merge', GITHUB_HEAD_REF: 'feature/x' }))
      .toEqual({ provider: 'github-actions', commit: 'abc', branch: 'feature/x' });
    expect(ciEnvironment({ GITHUB_ACTIONS: 'true', GITHUB_SHA: 'abc', GITHUB_REF_NAME: 'main' })).toEqual({ provider: 'github-actions', commit: 'abc', branch: 'main' });
    expect(ciEnvironment({ GITLAB_CI: 'true', CI_COMMIT_SHA: 'def', CI_COMMIT_REF_NAME: 'main' })).toEqual({ provider: 'gitlab', commit: 'def', branch: 'main' });
    expect(ciEnvironment({ CIRCLECI: 'true', CIRCLE_SHA1: 'c1', CIRCLE_BRANCH: 'dev' })).toEqual({ provider: 'circleci', commit: 'c1', branch: 'dev' });
    expect(ciEnvironment({ CI: 'true' })).toEqual({ provider: 'ci', commit: null, branch: null });
    expect(ciEnvironment({})).toEqual({ provider: null, commit: null, branch: null });
  });
});
