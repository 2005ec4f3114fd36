import { z } from 'zod';
import { ROLLUP_WINDOWS } from '../core/vocabulary.js';
import { MAX_UNIX_SECONDS, ReuseTier, queryInt } from './common.js';

/** Wire schemas of docs/behavior.md "Analytics": rollup compute/read and raw ROI events. */

export const RollupWindow = z.enum(ROLLUP_WINDOWS);

export const RollupRequest = z.object({ window: RollupWindow }).strict();
export type RollupRequest = z.input<typeof RollupRequest>;
export type RollupInput = z.output<typeof RollupRequest>;

export const RollupParams = z.object({ window: RollupWindow });

const rate = z.number().min(0).max(1).nullable();

export const RollupResponse = z.object({
  window: RollupWindow,
  computed_at: z.string(),
  /** (+) Start of the window; it ends at computed_at. */
  since: z.string(),
  /** Composite 0–10: weighted reuse rate, learn success rate and mean best similarity. */
  roi_score: z.number().min(0).max(10),
  /** (+) How roi_score was made: the weighted parts with their values and what they count. */
  roi_basis: z.string().optional(),
  /** (+) Events the summaries counted. */
  event_count: z.number().int().min(0),
  recall: z.object({
    /** Every recall of the window: (+) lookups (read-only) plus counted (reuse counted). */
    count: z.number().int().min(0),
    lookups: z.number().int().min(0).optional(),
    counted: z.number().int().min(0).optional(),
    hits: z.number().int().min(0),
    hit_rate: rate,
    tiers: z.object({
      duplicate: z.number().int().min(0),
      adapt: z.number().int().min(0),
      fresh: z.number().int().min(0),
      none: z.number().int().min(0),
    }),
    mean_best_similarity: rate,
  }),
  learn: z.object({
    count: z.number().int().min(0),
    stored: z.number().int().min(0),
    avg_eval_score: z.number().nullable(),
    success_rate: rate,
  }),
  /** Latency in milliseconds; null without samples. */
  percentiles: z.object({
    samples: z.number().int().min(0),
    p50: z.number().nullable(),
    p95: z.number().nullable(),
    p99: z.number().nullable(),
  }),
});
export type RollupResponse = z.infer<typeof RollupResponse>;


export const EventsQuery = z.object({
  limit: queryInt(1, 1000).default(100),
  /** Unix timestamp in seconds (fractions allowed); events at or after it. */
  since: z.coerce.number().min(0).max(MAX_UNIX_SECONDS).optional(),
}).strict();
/** The query as a client sends it (the numbers are coerced from text on the server). */
export type EventsListQuery = Omit<z.input<typeof EventsQuery>, 'limit' | 'since'> & { limit?: number; since?: number };
export type EventsQuery = z.input<typeof EventsQuery>;
export type EventsInput = z.output<typeof EventsQuery>;

export const RoiEventRecord = z.object({
  at: z.string(),
  kind: z.enum(['learn', 'recall']),
  stored: z.boolean().optional(),
  /** (+) recall: a lookup that counted no reuse (true) or a recall that did (false). */
  readonly: z.boolean().optional(),
  eval_score: z.number().optional(),
  best_similarity: z.number().nullable().optional(),
  best_tier: ReuseTier.nullable().optional(),
  matches: z.number().int().optional(),
  latency_ms: z.number().optional(),
}).passthrough();

export const EventsResponse = z.object({
  events: z.array(RoiEventRecord),
  count: z.number().int().min(0),
});
export type EventsResponse = z.infer<typeof EventsResponse>;
