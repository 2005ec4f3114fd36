import { z } from 'zod';

/**
 * Files read by `service calibrate` and the model-tier resolver (not HTTP bodies, but parsed
 * at an edge all the same).
 */

/** (+) `tier_policy` in a model folder's config.json (core/tier-policy.ts). */
export const TierPolicyFile = z.enum(['fixed', 'calibrated']);

/** `reuse_tiers` in a model folder's config.json. */
export const ReuseTiersFile = z.object({
  duplicate: z.number().min(0).max(1),
  adapt: z.number().min(0).max(1),
}).refine((t) => t.adapt <= t.duplicate, { message: 'adapt must not exceed duplicate' });

const Text = z.string().trim().min(1).max(10_000);

/**
 * A labelled calibration set: clusters of wordings of one task (the first `stored` wordings of
 * each are stored, the rest are queries), optional lookalikes per cluster (same words,
 * different job), and unrelated tasks with no stored counterpart.
 */
export const CalibrationSetFile = z.object({
  description: z.string().optional(),
  clusters: z.array(z.object({
    id: z.string().min(1),
    wordings: z.array(Text).min(2, 'a cluster needs at least two wordings (one stored, one query)'),
    lookalikes: z.array(Text).default([]),
  })).min(1),
  unrelated: z.array(Text).default([]),
});
export type CalibrationSetFile = z.output<typeof CalibrationSetFile>;
