/**
 * Where a reuse's success credit goes (docs/behavior.md "Outcomes"), pure. The spec gives a
 * pattern +0.1 success_score for every recall that returns it as reusable (`on-recall`, the
 * default). `on-outcome` (+) gives nothing for the hit and +0.1 for each reported success, −0.1
 * for each reported failure, so a pattern's score follows what reusing it did.
 */
export const REUSE_CREDIT_MODES = ['on-recall', 'on-outcome'] as const;
export type ReuseCreditMode = (typeof REUSE_CREDIT_MODES)[number];

/** The spec's success credit of one reuse. */
export const REUSE_CREDIT = 0.1;

/** What a reusable recall hit adds to the pattern's success_score. */
export function recallCredit(mode: ReuseCreditMode): number {
  return mode === 'on-recall' ? REUSE_CREDIT : 0;
}

/**
 * What a reported outcome adds (a failure: takes) from the pattern's success_score. A report
 * that replaces an earlier one of the same recall and pattern moves nothing again.
 */
export function outcomeCredit(mode: ReuseCreditMode, passed: boolean): number {
  if (mode !== 'on-outcome') return 0;
  return passed ? REUSE_CREDIT : -REUSE_CREDIT;
}

/** success_score stays within [0, 10] whatever the credits. */
export function creditedScore(score: number, delta: number): number {
  return Math.min(10, Math.max(0, score + delta));
}
