import { describe, expect, it } from 'vitest';
import { consoleLink } from '../../commands/evaluate-run.js';
import { CONSOLE_COMPARE, CONSOLE_EVALUATIONS, consoleEvaluationHash, consoleEvaluationPath } from '../../src/core/vocabulary.js';

/**
 * A run's Markdown comment links to the console with consoleEvaluationHash, and the console's
 * router serves these routes (the browser test, test/console/evaluations.e2e.test.ts, opens
 * such links and follows the console's own).
 */
describe('console links to an evaluation run', () => {
  it('are #/evaluations/<id> and #/evaluations/<id>/compare/<baseline>, each part encoded', () => {
    expect(consoleEvaluationHash('0k3x9q2m7c4v8b1n5z')).toBe('#/evaluations/0k3x9q2m7c4v8b1n5z');
    expect(consoleEvaluationHash('0k3x9q2m7c4v8b1n5z', 'release/2.1')).toBe('#/evaluations/0k3x9q2m7c4v8b1n5z/compare/release%2F2.1');
    expect(consoleEvaluationHash('0k3x9q2m7c4v8b1n5z', null)).toBe(consoleEvaluationHash('0k3x9q2m7c4v8b1n5z'));
  });

  it('decode back to the path segments the router dispatches on', () => {
    const hash = consoleEvaluationHash('0k3x9q2m7c4v8b1n5z', 'pr-42/head@x+y:z');
    expect(hash.slice(2).split('/').map(decodeURIComponent)).toEqual(consoleEvaluationPath('0k3x9q2m7c4v8b1n5z', 'pr-42/head@x+y:z'));
    expect(consoleEvaluationPath('0k3x9q2m7c4v8b1n5z', 'main')).toEqual([CONSOLE_EVALUATIONS, '0k3x9q2m7c4v8b1n5z', CONSOLE_COMPARE, 'main']);
  });

  it("is what a run's Markdown comment links to", () => {
    expect(consoleLink('http://127.0.0.1:8000/', '0k3x9q2m7c4v8b1n5z')).toBe('http://127.0.0.1:8000/console#/evaluations/0k3x9q2m7c4v8b1n5z');
  });
});
