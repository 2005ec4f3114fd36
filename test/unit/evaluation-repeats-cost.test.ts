import { describe, expect, it } from 'vitest';
import { judgeKeyMaterial, type JudgeConfig } from '../../src/core/judge-cache-key.js';
import { costCeiling, costUsd, parsePriceTable, priceFor } from '../../src/core/pricing.js';
import { parseReducer, passHatK, reduceRepeats } from '../../src/core/repeats.js';
import { judgeCacheKey } from '../../src/services/judge-cache.js';

describe('repeats (docs/behavior.md "Evaluation repeats")', () => {
  it('parses the reducers and refuses anything else', () => {
    expect(parseReducer('all')).toEqual({ kind: 'all' });
    expect(parseReducer('majority')).toEqual({ kind: 'majority' });
    expect(parseReducer('min-rate:0.8')).toEqual({ kind: 'min-rate', rate: 0.8 });
    expect(parseReducer('min-rate:1')).toEqual({ kind: 'min-rate', rate: 1 });
    for (const bad of ['', 'any', 'min-rate:', 'min-rate:0', 'min-rate:1.5', 'min-rate:-1', 'majority:2']) expect(parseReducer(bad), bad).toBeNull();
  });

  it('reduces N outcomes: pass rate, flaky when some but not all passed, and each reducer\'s verdict', () => {
    const twoOfThree = [true, false, true];
    expect(reduceRepeats(twoOfThree, { kind: 'all' })).toEqual({ repeats: 3, passes: 2, pass_rate: 2 / 3, flaky: true, passed: false });
    expect(reduceRepeats(twoOfThree, { kind: 'majority' }).passed).toBe(true);
    expect(reduceRepeats(twoOfThree, { kind: 'min-rate', rate: 0.8 }).passed).toBe(false);
    expect(reduceRepeats(twoOfThree, { kind: 'min-rate', rate: 0.6 }).passed).toBe(true);
    // A tie is no majority.
    expect(reduceRepeats([true, false], { kind: 'majority' }).passed).toBe(false);
    expect(reduceRepeats([true, true], { kind: 'all' })).toMatchObject({ flaky: false, passed: true, pass_rate: 1 });
    expect(reduceRepeats([false, false], { kind: 'min-rate', rate: 0.1 })).toMatchObject({ flaky: false, passed: false, pass_rate: 0 });
  });

  it('pass^k is the unbiased C(c,k)/C(n,k) averaged over cases', () => {
    const cases = [{ passes: 3, repeats: 3 }, { passes: 2, repeats: 3 }, { passes: 0, repeats: 3 }];
    expect(passHatK(cases, 3)).toBeCloseTo(1 / 3, 12);
    expect(passHatK(cases, 1)).toBeCloseTo((1 + 2 / 3 + 0) / 3, 12);
    expect(passHatK(cases, 2)).toBeCloseTo((1 + 1 / 3 + 0) / 3, 12);
    expect(passHatK([], 2)).toBeNull();
    expect(() => passHatK(cases, 4)).toThrow(RangeError);
  });
});

describe('pricing (docs/behavior.md "Evaluation cost")', () => {
  it('prices tokens per million, configured prices first, shipped ones next, unknown models null', () => {
    expect(costUsd({ input: 1_000_000, output: 500_000 }, { input_per_mtok: 0.15, output_per_mtok: 0.6 })).toBe(0.45);
    expect(priceFor('gpt-4o-mini', {})).toEqual({ input_per_mtok: 0.15, output_per_mtok: 0.6 });
    expect(priceFor('gpt-4o-mini', { 'gpt-4o-mini': { input_per_mtok: 1, output_per_mtok: 2 } })).toEqual({ input_per_mtok: 1, output_per_mtok: 2 });
    expect(priceFor('claude-3-5-haiku-latest', {})).not.toBeNull();
    expect(priceFor('my-local-model', {})).toBeNull();
  });

  it('parses SERVICE_LLM_PRICES and names a bad entry', () => {
    expect(parsePriceTable('qwen2.5-coder:7b=0:0, gpt-4o=2.5:10')).toEqual({
      'qwen2.5-coder:7b': { input_per_mtok: 0, output_per_mtok: 0 },
      'gpt-4o': { input_per_mtok: 2.5, output_per_mtok: 10 },
    });
    expect(() => parsePriceTable('gpt-4o=2.5')).toThrow(/"gpt-4o=2.5" is not model=input:output/);
    expect(() => parsePriceTable('=1:2')).toThrow(/is not model=input:output/);
  });

  it('the cost ceiling counts the whole prompt per evaluator and each one\'s full answer limit', () => {
    const price = { input_per_mtok: 1, output_per_mtok: 10 };
    expect(costCeiling(3000, 3, 600, price)).toBe(costUsd({ input: 3000, output: 1800 }, price));
  });
});

describe('the judge cache key (docs/behavior.md "Judge cache")', () => {
  const judge: JudgeConfig = { provider: 'openai', model: 'gpt-4o-mini', prompt_version: 'evaluate-1', rubric_hash: 'r1', num_evals: 3, temperature: 0.7, max_tokens: 600 };
  const text = { task: 'sum', code: 'print(1)', output: '1' };

  it('changes with every part of the judge configuration, the text and the repeat slot', () => {
    const base = judgeCacheKey(text, judge, 0);
    expect(judgeCacheKey({ ...text }, { ...judge }, 0)).toBe(base);
    const variants: [string, string][] = [
      ['provider', judgeCacheKey(text, { ...judge, provider: 'anthropic' }, 0)],
      ['model', judgeCacheKey(text, { ...judge, model: 'gpt-4o' }, 0)],
      ['prompt_version', judgeCacheKey(text, { ...judge, prompt_version: 'evaluate-2' }, 0)],
      ['rubric', judgeCacheKey(text, { ...judge, rubric_hash: 'r2' }, 0)],
      ['num_evals', judgeCacheKey(text, { ...judge, num_evals: 5 }, 0)],
      ['temperature', judgeCacheKey(text, { ...judge, temperature: 0.2 }, 0)],
      ['max_tokens', judgeCacheKey(text, { ...judge, max_tokens: 601 }, 0)],
      ['sample', judgeCacheKey(text, judge, 1)],
      ['task', judgeCacheKey({ ...text, task: 'sum!' }, judge, 0)],
      ['no task', judgeCacheKey({ code: text.code, output: text.output }, judge, 0)],
      ['code', judgeCacheKey({ ...text, code: 'print(2)' }, judge, 0)],
      ['output', judgeCacheKey({ ...text, output: '2' }, judge, 0)],
      ['empty output', judgeCacheKey({ ...text, output: '' }, judge, 0)],
    ];
    for (const [what, key] of variants) expect(key, what).not.toBe(base);
    expect(new Set(variants.map(([, k]) => k)).size).toBe(variants.length);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });

  it('material is a fixed-order array, so field order in the objects does not matter', () => {
    const reordered = Object.fromEntries(Object.entries(judge).reverse()) as unknown as JudgeConfig;
    expect(judgeKeyMaterial({ task_hash: 'a', code_hash: 'b', output_hash: 'c' }, reordered, 2))
      .toBe(judgeKeyMaterial({ output_hash: 'c', code_hash: 'b', task_hash: 'a' }, judge, 2));
  });
});
