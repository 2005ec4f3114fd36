import {
  calibrateThresholds, distribution, measure, outcome, type Distribution, type LabelledVectors, type TierOutcome,
} from '../core/calibration.js';
import { centeredCosine, centeringApplies, dot, unitVector } from '../core/hybrid.js';
import { SPEC_TIERS } from '../core/similarity.js';
import { fitAdaptThreshold, fixedPolicy, type TierPolicyInForce } from '../core/tier-policy.js';
import type { ReuseTierSettings, TierThresholds } from '../core/types.js';
import type { CalibrationSetFile } from '../contracts/calibration.js';
import type { Embedder } from '../ports/embedder.js';

export interface CalibrateOptions {
  /** Highest share of unrelated tasks allowed at adapt, and of lookalikes at duplicate. */
  rate: number;
  /** Wordings of each cluster that are stored (default: all but the last); the rest are queries. */
  storedPerCluster?: number;
}

export interface CalibrationReport {
  model: string;
  rate: number;
  set: { clusters: number; stored: number; queries: number; lookalikes: number; unrelated: number };
  distributions: { true_match: Distribution; unrelated: Distribution; lookalike: Distribution };
  precision_at_1: { correct: number; of: number; share: number | null };
  /** How the thresholds in force treat the set. */
  current: TierOutcome;
  /** The thresholds this set calls for, and how they treat it. */
  calibrated: TierOutcome;
  /**
   * (+) The model's tier policy, as a project holding the set's stored wordings would have it
   * (calibrated: the adapt threshold fitted on those wordings, docs/behavior.md "Reuse tiers").
   */
  tier_policy: TierPolicyInForce;
}

/**
 * `service calibrate`: embeds a labelled set with the configured embedder, measures the
 * similarity distributions and derives thresholds (core/calibration.ts). No storage: the
 * "stored" wordings are compared in memory, exactly as recall's cosine would score them.
 */
export async function calibrate(
  embedder: Embedder,
  set: CalibrationSetFile,
  current: TierThresholds,
  opts: CalibrateOptions,
): Promise<CalibrationReport> {
  const texts: string[] = [];
  const stored: { cluster: number; at: number }[] = [];
  const queries: { cluster: number; at: number }[] = [];
  const lookalikes: { cluster: number; at: number }[] = [];
  set.clusters.forEach((cluster, index) => {
    // At least one stored and one query per cluster, whatever was asked.
    const keep = Math.min(Math.max(1, opts.storedPerCluster ?? cluster.wordings.length - 1), cluster.wordings.length - 1);
    cluster.wordings.forEach((text, i) => (i < keep ? stored : queries).push({ cluster: index, at: texts.push(text) - 1 }));
    for (const text of cluster.lookalikes) lookalikes.push({ cluster: index, at: texts.push(text) - 1 });
  });
  const unrelatedAt = set.unrelated.map((text) => texts.push(text) - 1);

  const vectors = await embedder.embed(texts);
  const labelled: LabelledVectors = {
    stored: stored.map((s) => ({ cluster: s.cluster, vector: vectors[s.at] })),
    queries: queries.map((q) => ({ cluster: q.cluster, vector: vectors[q.at] })),
    lookalikes: lookalikes.map((l) => ({ cluster: l.cluster, vector: vectors[l.at] })),
    unrelated: unrelatedAt.map((at) => vectors[at]),
  };
  const m = measure(labelled);
  const thresholds = calibrateThresholds(m, opts.rate, SPEC_TIERS.duplicate);
  return {
    model: embedder.info.model,
    rate: opts.rate,
    set: {
      clusters: set.clusters.length,
      stored: stored.length,
      queries: queries.length,
      lookalikes: lookalikes.length,
      unrelated: set.unrelated.length,
    },
    distributions: {
      true_match: distribution(m.trueMatch),
      unrelated: distribution(m.unrelated),
      lookalike: distribution(m.lookalike),
    },
    precision_at_1: {
      correct: m.top1Correct,
      of: queries.length,
      share: queries.length === 0 ? null : m.top1Correct / queries.length,
    },
    current: outcome(m, { duplicate: current.duplicate, adapt: current.adapt }),
    calibrated: outcome(m, thresholds),
    tier_policy: policyForSet(labelled.stored.map((s) => s.vector), current),
  };
}

/** The policy a project of exactly these stored vectors would get (every pair compared: the set is small). */
function policyForSet(vectors: Float32Array[], current: TierThresholds & Partial<Pick<ReuseTierSettings, 'policy' | 'source'>>): TierPolicyInForce {
  if (current.policy !== 'calibrated') return fixedPolicy(current, current.source?.adapt ?? 'spec_default');
  const units = vectors.map(unitVector);
  const sum = new Float64Array(units[0]?.length ?? 0);
  for (const u of units) u.forEach((x, i) => (sum[i] += x));
  const mean = Float32Array.from(sum, (x) => x / Math.max(1, units.length));
  const mm = dot(mean, mean);
  const centre = centeringApplies({ vectors: units.length, query_mean_dot: 0, mean_norm2: mm });
  const meanDots = units.map((u) => dot(u, mean));
  const bests = units.map((u, i) => {
    let best = -Infinity;
    units.forEach((v, j) => {
      if (j === i) return;
      const cos = dot(u, v);
      best = Math.max(best, centre ? centeredCosine(cos, meanDots[i], meanDots[j], mm) : cos);
    });
    return best;
  });
  const fitted = fitAdaptThreshold(bests);
  return fitted === null
    ? { policy: 'calibrated', duplicate_threshold: null, adapt_threshold: current.adapt, source: 'small_project_fallback' }
    : { policy: 'calibrated', duplicate_threshold: null, adapt_threshold: fitted, source: 'project_fit' };
}
