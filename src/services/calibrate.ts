import {
  calibrateThresholds, distribution, measure, outcome, type Distribution, type LabelledVectors, type TierOutcome,
} from '../core/calibration.js';
import { SPEC_TIERS } from '../core/similarity.js';
import type { TierThresholds } from '../core/types.js';
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
  };
}
