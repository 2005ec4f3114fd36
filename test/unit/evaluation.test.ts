import { describe, expect, it } from 'vitest';
import {
  aggregateEvaluations,
  clampScore,
  distinctFeedback,
  type EvaluatorScore,
  staticHardcodedCheck,
  stringLiterals,
  toEvaluatorScore,
} from '../../src/core/evaluation.js';

const score = (overall: number, feedback = '', hardcoded = false): EvaluatorScore => ({
  task_alignment: overall,
  code_quality: overall,
  workspace_usage: overall,
  robustness: overall,
  overall,
  feedback,
  hardcoded,
});

describe('clampScore', () => {
  it('keeps numbers in range and clamps the rest to [0, 10]', () => {
    expect(clampScore(7.5)).toBe(7.5);
    expect(clampScore(-2)).toBe(0);
    expect(clampScore(11)).toBe(10);
  });
  it('accepts numeric strings', () => expect(clampScore(' 8 ')).toBe(8));
  it('returns null for anything that is not a finite number', () => {
    for (const x of [null, undefined, 'eight', '', '  ', Number.NaN, Number.POSITIVE_INFINITY, true, {}, [5]]) {
      expect(clampScore(x)).toBeNull();
    }
  });
});

describe('toEvaluatorScore', () => {
  const good = { task_alignment: 8, code_quality: '7', workspace_usage: 12, robustness: 5, overall: 7, feedback: ' Add tests. ', hardcoded: false };
  it('validates, clamps and trims', () => {
    expect(toEvaluatorScore(good)).toEqual({ ...good, code_quality: 7, workspace_usage: 10, feedback: 'Add tests.' });
  });
  it('defaults a missing feedback/hardcoded', () => {
    const { feedback: _f, hardcoded: _h, ...bare } = good;
    expect(toEvaluatorScore(bare)).toMatchObject({ feedback: '', hardcoded: false });
  });
  it('rejects missing or non-numeric scores and wrong types', () => {
    const { overall: _o, ...noOverall } = good;
    expect(toEvaluatorScore(noOverall)).toBeNull();
    expect(toEvaluatorScore({ ...good, robustness: 'high' })).toBeNull();
    expect(toEvaluatorScore({ ...good, hardcoded: 'yes' })).toBeNull();
    expect(toEvaluatorScore({ ...good, feedback: 3 })).toBeNull();
    for (const x of [null, 'text', [good], 5]) expect(toEvaluatorScore(x)).toBeNull();
  });
});

describe('stringLiterals', () => {
  it('finds single, double, backtick and triple-quoted literals', () => {
    const code = `a = 'one'; b = "two"; c = \`three \${x}\`; d = """four\nlines"""`;
    expect(stringLiterals(code)).toEqual(['one', 'two', 'three ${x}', 'four\nlines']);
  });
  it('yields escaped and unescaped forms', () => {
    expect(stringLiterals('print("say \\"hi\\"")')).toEqual(['say \\"hi\\"', 'say "hi"']);
  });
  it("does not let an apostrophe in a comment swallow the next lines", () => {
    expect(stringLiterals("// don't\nx = 'real'")).toEqual(['real']);
  });
});

describe('staticHardcodedCheck', () => {
  const output = 'Result: 42 items processed\nok\n';
  it('fires when an output line is printed from a literal', () => {
    expect(staticHardcodedCheck('print("Result: 42 items processed")', output)).toBe(true);
    expect(staticHardcodedCheck("console.log('Result: 42 items processed');", output)).toBe(true);
    expect(staticHardcodedCheck('console.log(`Result: 42 items processed`)', output)).toBe(true);
  });
  it('matches a trimmed line inside a longer literal', () => {
    expect(staticHardcodedCheck('s = "HEADER\\nResult: 42 items processed\\n"', '   Result: 42 items processed   ')).toBe(true);
  });
  it('matches escaped quotes in the literal', () => {
    expect(staticHardcodedCheck('print("status: \\"done\\" now")', 'status: "done" now')).toBe(true);
  });
  it('does not fire when the output is computed', () => {
    expect(staticHardcodedCheck('print(f"Result: {n} items processed")', output)).toBe(false);
    expect(staticHardcodedCheck('console.log(`Result: ${n} items processed`)', output)).toBe(false);
  });
  it('ignores lines shorter than 8 characters and whitespace-only lines', () => {
    expect(staticHardcodedCheck('print("ok"); print("1234567")', 'ok\n1234567\n        \n')).toBe(false);
    expect(staticHardcodedCheck('print("12345678")', '12345678')).toBe(true);
  });
  it('does not match text that is in the code but outside literals', () => {
    expect(staticHardcodedCheck('def compute_total_items(): pass', 'compute_total_items')).toBe(false);
  });
  it('is false without output', () => {
    expect(staticHardcodedCheck('print("anything long")', null)).toBe(false);
    expect(staticHardcodedCheck('print("anything long")', undefined)).toBe(false);
    expect(staticHardcodedCheck('print("anything long")', '')).toBe(false);
  });
});

describe('aggregateEvaluations', () => {
  it('median and population variance of overall; high_variance above 1.5', () => {
    const r = aggregateEvaluations([score(6), score(8), score(10)], false);
    expect(r.median_score).toBe(8);
    expect(r.variance).toBeCloseTo(8 / 3, 10); // (4 + 0 + 4) / 3
    expect(r.high_variance).toBe(true);
  });
  it('even counts average the middle scores; low spread is not high variance', () => {
    const r = aggregateEvaluations([score(7), score(8)], false);
    expect(r.median_score).toBe(7.5);
    expect(r.variance).toBe(0.25);
    expect(r.high_variance).toBe(false);
  });
  it('variance of exactly 1.5 is not high', () => {
    // 3, 6, 6: mean 5, squared deviations 4 + 1 + 1 = 6, /3 = 2 → high
    expect(aggregateEvaluations([score(3), score(6), score(6)], false).high_variance).toBe(true);
    // 4, 5.5, 7 → deviations 2.25 + 0 + 2.25 = 4.5, /3 = 1.5 exactly: not high
    const r = aggregateEvaluations([score(4), score(5.5), score(7)], false);
    expect(r.variance).toBe(1.5);
    expect(r.high_variance).toBe(false);
  });
  it('feedback: distinct sentences, lowest-scoring evaluator first, newline-joined', () => {
    const r = aggregateEvaluations(
      [score(9, 'Add docstrings.'), score(3, 'Handle empty input.'), score(6, 'add   DOCSTRINGS.'), score(5, '  ')],
      false,
    );
    expect(r.feedback).toBe('Handle empty input.\nadd DOCSTRINGS.');
  });
  it('adversarial on a strict majority of hardcoded votes', () => {
    expect(aggregateEvaluations([score(5, '', true), score(5, '', true), score(5)], false).adversarial_detected).toBe(true);
    expect(aggregateEvaluations([score(5, '', true), score(5)], false).adversarial_detected).toBe(false);
    expect(aggregateEvaluations([score(5, '', true), score(5), score(5)], false).adversarial_detected).toBe(false);
  });
  it('adversarial when the static check fired, whatever the votes', () => {
    expect(aggregateEvaluations([score(9), score(9)], true).adversarial_detected).toBe(true);
  });
  it('throws when no evaluator answered', () => {
    expect(() => aggregateEvaluations([], false)).toThrow(RangeError);
  });
  it('distinctFeedback keeps evaluator order on ties', () => {
    expect(distinctFeedback([score(5, 'B first.'), score(5, 'A second.')])).toEqual(['B first.', 'A second.']);
  });
});
