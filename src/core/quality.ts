import { median } from './stats.js';

/** How many of the newest eval observations count toward the quality factor. */
export const QUALITY_WINDOW = 5;
/** Factor for a pattern with no eval history: the midpoint, neither rewarded nor punished. */
export const NEUTRAL_QUALITY_FACTOR = 0.75;

/**
 * Eval-weighting multiplier for recall ranking: 0.5 + 0.05 × median of the newest 5 eval
 * observations (scores 0–10), so it always lies in [0.5, 1.0]. The median (not the mean)
 * keeps one outlier evaluation from swinging a pattern's rank.
 * Non-finite observations are ignored; scores outside [0, 10] are clamped first.
 */
export function qualityFactor(recentNewestFirst: readonly number[]): number {
  // One pass into one small array (recall scores every candidate with this, some 50 a request;
  // a filter, slice and map chain was three arrays and three closures each time).
  const window: number[] = [];
  for (let i = 0; i < recentNewestFirst.length && window.length < QUALITY_WINDOW; i++) {
    const x = recentNewestFirst[i];
    if (Number.isFinite(x)) window.push(Math.max(0, Math.min(10, x)));
  }
  if (window.length === 0) return NEUTRAL_QUALITY_FACTOR;
  // One observation (the usual case) is its own median, without median()'s sorted copy.
  return Math.max(0.5, Math.min(1, 0.5 + 0.05 * (window.length === 1 ? window[0] : median(window))));
}
