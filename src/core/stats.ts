/**
 * Small descriptive statistics used by evaluation, quality weighting and analytics.
 */

/** Arithmetic mean; NaN for an empty list (callers decide what "no data" means). */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** Median (average of the two middle values for even lengths); NaN when empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Population variance (divide by n, not n-1): evaluators are the whole population. 0 when empty. */
export function populationVariance(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const m = mean(xs);
  let sum = 0;
  for (const x of xs) sum += (x - m) ** 2;
  return sum / xs.length;
}

/**
 * Percentile with linear interpolation between closest ranks (the "R-7"/numpy default),
 * p in [0, 100]. NaN when empty; throws RangeError for p outside [0, 100] or non-finite.
 */
export function percentile(xs: readonly number[], p: number): number {
  if (!Number.isFinite(p) || p < 0 || p > 100) {
    throw new RangeError(`percentile p must be within [0, 100], got ${p}`);
  }
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}
