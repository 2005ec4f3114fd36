import { seededRandom } from './random.js';

/**
 * Rates with 95% bootstrap intervals over problems: the asks of one problem (pooled over
 * seeds) are resampled together, as the agent-loop protocol asks, so a problem asked three
 * times weighs three asks but is drawn as one unit.
 */

/** One problem's tally: successes out of asks. */
export interface Tally {
  hits: number;
  of: number;
}

export interface Interval {
  rate: number;
  lo: number;
  hi: number;
  asks: number;
}

const RESAMPLES = 2_000;

/** The pooled rate and its 95% percentile interval over `RESAMPLES` resamples of the problems. */
export function bootstrapRate(tallies: readonly Tally[], seed = 1): Interval {
  const hits = tallies.reduce((s, t) => s + t.hits, 0);
  const of = tallies.reduce((s, t) => s + t.of, 0);
  if (of === 0) return { rate: Number.NaN, lo: Number.NaN, hi: Number.NaN, asks: 0 };
  const random = seededRandom(seed);
  const rates = new Float64Array(RESAMPLES);
  for (let r = 0; r < RESAMPLES; r++) {
    let h = 0;
    let n = 0;
    for (let i = 0; i < tallies.length; i++) {
      const t = tallies[Math.floor(random() * tallies.length)];
      h += t.hits;
      n += t.of;
    }
    rates[r] = n === 0 ? 0 : h / n;
  }
  rates.sort();
  return { rate: hits / of, lo: rates[Math.floor(0.025 * RESAMPLES)], hi: rates[Math.ceil(0.975 * RESAMPLES) - 1], asks: of };
}

/**
 * The paired difference (with − without) of two rates over the same problems and asks, with
 * its 95% interval: each resample draws problems and takes both arms' tallies of those problems.
 */
export function bootstrapDifference(withArm: readonly Tally[], withoutArm: readonly Tally[], seed = 2): Interval {
  if (withArm.length !== withoutArm.length) throw new RangeError('paired tallies need the same problems');
  const rate = (ts: readonly Tally[]) => {
    const of = ts.reduce((s, t) => s + t.of, 0);
    return of === 0 ? Number.NaN : ts.reduce((s, t) => s + t.hits, 0) / of;
  };
  const random = seededRandom(seed);
  const diffs = new Float64Array(RESAMPLES);
  const n = withArm.length;
  for (let r = 0; r < RESAMPLES; r++) {
    let hw = 0;
    let nw = 0;
    let ho = 0;
    let no = 0;
    for (let i = 0; i < n; i++) {
      const j = Math.floor(random() * n);
      hw += withArm[j].hits;
      nw += withArm[j].of;
      ho += withoutArm[j].hits;
      no += withoutArm[j].of;
    }
    diffs[r] = (nw === 0 ? 0 : hw / nw) - (no === 0 ? 0 : ho / no);
  }
  diffs.sort();
  return {
    rate: rate(withArm) - rate(withoutArm),
    lo: diffs[Math.floor(0.025 * RESAMPLES)],
    hi: diffs[Math.ceil(0.975 * RESAMPLES) - 1],
    asks: withArm.reduce((s, t) => s + t.of, 0),
  };
}

/** "61.2% [58.9, 63.4]" (rates) or "+3.1 [+1.2, +5.0]" (differences, points). */
export function formatRate(i: Interval): string {
  if (Number.isNaN(i.rate)) return '-';
  return `${(100 * i.rate).toFixed(1)}% [${(100 * i.lo).toFixed(1)}, ${(100 * i.hi).toFixed(1)}]`;
}

export function formatDifference(i: Interval): string {
  if (Number.isNaN(i.rate)) return '-';
  const s = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
  return `${s(i.rate)} [${s(i.lo)}, ${s(i.hi)}]`;
}
