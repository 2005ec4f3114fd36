import { cosine } from './similarity.js';
import { percentile } from './stats.js';
import type { TierThresholds } from './types.js';

/**
 * Calibration of the reuse tiers for one embedding model (`service calibrate`). Pure: the
 * caller embeds the labelled set; everything here is arithmetic on the vectors.
 *
 * Vocabulary:
 * - a *cluster* is one task written several ways; some wordings are stored, the others are
 *   queries whose right answer is their own cluster (a "true match");
 * - an *unrelated* task has no stored counterpart: its best similarity to anything stored is
 *   what decides whether it would be told `adapt`;
 * - a *lookalike* shares words with a cluster's task but asks for a different job: its
 *   similarity to the task it imitates decides whether it would be told `duplicate`.
 */
export interface LabelledVectors {
  stored: { cluster: number; vector: Float32Array }[];
  queries: { cluster: number; vector: Float32Array }[];
  lookalikes: { cluster: number; vector: Float32Array }[];
  unrelated: Float32Array[];
}

export interface Measurements {
  /** Per query: the best similarity to a stored wording of its own cluster. */
  trueMatch: number[];
  /** Per unrelated task: the best similarity to anything stored. */
  unrelated: number[];
  /** Per lookalike: the best similarity to a stored wording of the cluster it imitates. */
  lookalike: number[];
  /** Queries whose single best stored wording belongs to their own cluster. */
  top1Correct: number;
}

export interface Distribution {
  n: number;
  p10: number | null;
  p50: number | null;
  p90: number | null;
  max: number | null;
}

/** How a set of thresholds treats the labelled set. Shares are in [0, 1] (null with no samples). */
export interface TierOutcome {
  thresholds: TierThresholds;
  unrelatedAtAdapt: Share;
  lookalikesAtDuplicate: Share;
  lookalikesAtAdapt: Share;
  trueAtDuplicate: Share;
  trueAtAdapt: Share;
}

export interface Share {
  count: number;
  of: number;
  share: number | null;
}

/** Thresholds move on a grid of hundredths, the precision anyone writes them in. */
const GRID = 100;

export function measure(v: LabelledVectors): Measurements {
  const trueMatch: number[] = [];
  let top1Correct = 0;
  for (const q of v.queries) {
    let own = 0;
    let best = -Infinity;
    let bestCluster = -1;
    for (const s of v.stored) {
      const sim = cosine(q.vector, s.vector);
      if (s.cluster === q.cluster) own = Math.max(own, sim);
      // Ties go to the wrong cluster: a tie is not a win for retrieval.
      if (sim > best || (sim === best && s.cluster !== q.cluster)) {
        best = sim;
        bestCluster = s.cluster;
      }
    }
    trueMatch.push(clamp(own));
    if (bestCluster === q.cluster) top1Correct++;
  }
  const unrelated = v.unrelated.map((u) => clamp(Math.max(0, ...v.stored.map((s) => cosine(u, s.vector)))));
  const lookalike = v.lookalikes.map((l) =>
    clamp(Math.max(0, ...v.stored.filter((s) => s.cluster === l.cluster).map((s) => cosine(l.vector, s.vector)))),
  );
  return { trueMatch, unrelated, lookalike, top1Correct };
}

export function distribution(xs: readonly number[]): Distribution {
  if (xs.length === 0) return { n: 0, p10: null, p50: null, p90: null, max: null };
  return { n: xs.length, p10: percentile(xs, 10), p50: percentile(xs, 50), p90: percentile(xs, 90), max: Math.max(...xs) };
}

/**
 * The lowest threshold on the grid that lets at most `rate` of `values` reach it (value ≥
 * threshold). With rate 0.05 and 40 values, 2 may reach it, so the threshold sits just above
 * the third-highest value. Returns 1 when even that cannot be kept out (a value of 1.0).
 */
export function thresholdExcluding(values: readonly number[], rate: number): number {
  if (values.length === 0) return 0;
  const allowed = Math.floor(rate * values.length + 1e-9);
  if (allowed >= values.length) return 0;
  const sorted = [...values].sort((a, b) => b - a);
  const firstKeptOut = sorted[allowed];
  let steps = Math.floor(firstKeptOut * GRID);
  // Strictly above the value: compare the float actually returned, not the integer step.
  while (steps / GRID <= firstKeptOut && steps < GRID) steps++;
  return steps / GRID;
}

/**
 * Thresholds that keep unrelated tasks out of `adapt` and lookalikes out of `duplicate` at
 * `rate`. duplicate is never below adapt. Without lookalikes there is nothing to measure
 * duplicate against, so `fallbackDuplicate` (the spec's 0.92) stands, raised to adapt if needed.
 */
export function calibrateThresholds(m: Measurements, rate: number, fallbackDuplicate: number): TierThresholds {
  const adapt = thresholdExcluding(m.unrelated, rate);
  const duplicate = m.lookalike.length > 0 ? thresholdExcluding(m.lookalike, rate) : fallbackDuplicate;
  return { adapt, duplicate: Math.max(adapt, duplicate) };
}

export function outcome(m: Measurements, t: TierThresholds): TierOutcome {
  return {
    thresholds: t,
    unrelatedAtAdapt: share(m.unrelated, t.adapt),
    lookalikesAtDuplicate: share(m.lookalike, t.duplicate),
    lookalikesAtAdapt: share(m.lookalike, t.adapt),
    trueAtDuplicate: share(m.trueMatch, t.duplicate),
    trueAtAdapt: share(m.trueMatch, t.adapt),
  };
}

function share(values: readonly number[], threshold: number): Share {
  const count = values.filter((v) => v >= threshold).length;
  return { count, of: values.length, share: values.length === 0 ? null : count / values.length };
}

function clamp(x: number): number {
  return Number.isNaN(x) ? 0 : Math.max(0, Math.min(1, x));
}
