import { afterEach, describe, expect, it, vi } from 'vitest';
import { currentRoute, href } from '../../console/src/router.js';
import { CONSOLE_COMPARE, CONSOLE_EVALUATIONS, consoleEvaluationHash, consoleEvaluationPath } from '../../src/core/vocabulary.js';

/**
 * A run's Markdown comment links to the console with consoleEvaluationHash; the console's router
 * must read that link back as the run (and its comparison), whatever the baseline label holds.
 */
const routeOf = (hash: string) => {
  vi.stubGlobal('location', { hash });
  return currentRoute();
};

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('console links to an evaluation run', () => {
  it('are #/evaluations/<id> and #/evaluations/<id>/compare/<baseline>, each part encoded', () => {
    expect(consoleEvaluationHash('0k3x9q2m7c4v8b1n5z')).toBe('#/evaluations/0k3x9q2m7c4v8b1n5z');
    expect(consoleEvaluationHash('0k3x9q2m7c4v8b1n5z', 'release/2.1')).toBe('#/evaluations/0k3x9q2m7c4v8b1n5z/compare/release%2F2.1');
  });

  it("are what the console's own links are, and its router reads them back", () => {
    for (const [run, baseline] of [['0k3x9q2m7c4v8b1n5z', null], ['0k3x9q2m7c4v8b1n5z', 'main'], ['0k3x9q2m7c4v8b1n5z', 'pr-42/head@x+y:z']] as const) {
      const hash = consoleEvaluationHash(run, baseline);
      expect(href(consoleEvaluationPath(run, baseline))).toBe(hash);
      expect(routeOf(hash).path).toEqual(baseline ? [CONSOLE_EVALUATIONS, run, CONSOLE_COMPARE, baseline] : [CONSOLE_EVALUATIONS, run]);
    }
  });
});
