/** One week in milliseconds: the unit of both pattern aging and feedback decay. */
export const WEEK_MS = 7 * 24 * 60 * 60 * 1000;
/** Patterns whose aged success_score falls below this are pruned. */
export const PRUNE_THRESHOLD = 0.1;
/** Weekly retention of success_score. */
export const WEEKLY_DECAY = 0.98;

export interface AgeablePattern {
  success_score: number;
  created_at: string;
  last_aged_at: string | null;
}

/**
 * Whole and fractional weeks from an ISO timestamp to `now`, never negative (a timestamp in
 * the future, e.g. from clock skew between servers, must not raise a score).
 * Throws on an unparsable timestamp: that is corrupt data, not a reason to prune or keep.
 */
export function weeksSince(iso: string, now: Date): number {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) throw new RangeError(`invalid timestamp: ${JSON.stringify(iso)}`);
  const nowMs = now.getTime();
  if (Number.isNaN(nowMs)) throw new RangeError('invalid current time');
  return Math.max(0, (nowMs - then) / WEEK_MS);
}

/**
 * success_score × 0.98^(weeks since last_aged_at, or since created_at when never aged).
 *
 * Weeks are FRACTIONAL on purpose. Because 0.98^a × 0.98^b = 0.98^(a+b), any schedule of
 * runs (daily, weekly, irregular) compounds to exactly 0.98^(weeks since creation), provided
 * the caller stores last_aged_at = now after each run. Rounding down to whole weeks would
 * silently lose the remainder on every run (daily runs would never decay anything), and
 * rounding up would over-decay. Two runs in a row differ only by the milliseconds between
 * them (a factor ≈ 1 − 3e−11 per second), which is "no change" for every practical purpose.
 */
export function agedScore(p: AgeablePattern, now: Date): number {
  const weeks = weeksSince(p.last_aged_at ?? p.created_at, now);
  return p.success_score * WEEKLY_DECAY ** weeks;
}

/** Strictly below the threshold is pruned; exactly 0.1 survives. */
export function shouldPrune(score: number): boolean {
  return score < PRUNE_THRESHOLD;
}
