import { z } from 'zod';
import { Classification, DateTime, queryInt, Source } from './common.js';

const score = z.coerce.number().min(0).max(10);

/** (+) GET /v1/patterns: one page of the scope's patterns, newest `updated_at` first. */
export const PatternListQuery = z.object({
  limit: queryInt(1, 100).default(20),
  /** The previous page's `next_cursor`, as it came (opaque). */
  cursor: z.string().min(1).max(200).optional(),
  classification: Classification.optional(),
  source: Source.optional(),
  /** success_score bounds, both inclusive. */
  min_score: score.optional(),
  max_score: score.optional(),
  /** updated_at bounds, both exclusive. */
  updated_after: DateTime.optional(),
  updated_before: DateTime.optional(),
}).strict();
/** The query as a client sends it (the numbers are coerced from text on the server). */
export type PatternListQuery = Omit<z.input<typeof PatternListQuery>, 'limit' | 'min_score' | 'max_score'> & {
  limit?: number;
  min_score?: number;
  max_score?: number;
};
export type PatternListInput = z.output<typeof PatternListQuery>;

/** A listed pattern: its metadata and task, without code or output (GET /v1/patterns/{key} has them). */
export const PatternSummary = z.object({
  key: z.string(),
  task: z.string(),
  classification: Classification,
  source: Source,
  success_score: z.number(),
  eval_score: z.number(),
  reuse_count: z.number().int().min(0),
  created_at: z.string(),
  updated_at: z.string(),
});
export type PatternSummary = z.infer<typeof PatternSummary>;

export const PatternListResponse = z.object({
  patterns: z.array(PatternSummary),
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: z.string().nullable(),
});
export type PatternListResponse = z.infer<typeof PatternListResponse>;
