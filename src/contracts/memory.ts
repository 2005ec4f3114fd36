import { z } from 'zod';
import { Classification, PatternKey, ReuseTier, Source, nonBlank, queryBool, queryInt } from './common.js';

export const LearnRequest = z.object({
  task: nonBlank(10_000),
  code: nonBlank(500_000),
  eval_score: z.number().min(0).max(10),
  output: z.string().max(500_000).optional(),
  run_id: z.string().max(200).optional(),
  classification: Classification.default('internal'),
  source: Source.default('api'),
  author: z.string().max(200).optional(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
}).strict();
export type LearnRequest = z.input<typeof LearnRequest>;

export const LearnResponse = z.object({
  stored: z.boolean(),
  pattern_count: z.number().int(),
  redacted: z.literal(true).optional(),
  pattern_key: PatternKey.optional(),
});
export type LearnResponse = z.infer<typeof LearnResponse>;

const recallFields = {
  task: nonBlank(10_000),
  limit: z.number().int().min(1).max(50).default(5),
  offset: z.number().int().min(0).max(10_000).default(0),
  deduplicate: z.boolean().default(true),
  eval_weighted: z.boolean().default(true),
  classification: Classification.optional(),
  source: Source.optional(),
  min_score: z.number().min(0).max(10).optional(),
};

export const RecallRequest = z.object({ ...recallFields, readonly: z.boolean().default(false) }).strict();
export type RecallRequest = z.input<typeof RecallRequest>;
export type RecallQuery = z.output<typeof RecallRequest>;

/** GET /v1/recall: same fields from the query string, always read-only. */
export const RecallQueryString = z.object({
  task: nonBlank(10_000),
  limit: queryInt(1, 50).default(5),
  offset: queryInt(0, 10_000).default(0),
  deduplicate: queryBool.default(true),
  eval_weighted: queryBool.default(true),
  classification: Classification.optional(),
  source: Source.optional(),
  min_score: z.coerce.number().min(0).max(10).optional(),
}).strict();

export const RecallMatch = z.object({
  similarity: z.number().min(0).max(1),
  reuse_tier: ReuseTier,
  pattern_key: PatternKey,
  score: z.number(),
  pattern: z.object({
    task: z.string(),
    code: z.string(),
    success_score: z.number(),
    reuse_count: z.number().int(),
  }),
});
export type RecallMatch = z.infer<typeof RecallMatch>;

export const RecallResponse = z.object({
  matches: z.array(RecallMatch),
  has_more: z.boolean(),
  next_offset: z.number().int().nullable(),
});
export type RecallResponse = z.infer<typeof RecallResponse>;

export const MetricsResponse = z.object({
  runs: z.number().int(),
  success_rate: z.number().nullable(),
  avg_eval_score: z.number().nullable(),
  pattern_count: z.number().int(),
  reuse_rate: z.number().nullable(),
});
export type MetricsResponse = z.infer<typeof MetricsResponse>;

/** (+) POST /v1/aging takes no body, `{}`, or `{dry_run: true}` (count only, change nothing). */
export const AgingRequest = z.object({
  dry_run: z.boolean().default(false),
}).strict();
export type AgingRequest = z.input<typeof AgingRequest>;

export const AgingResponse = z.object({
  aged: z.number().int(),
  pruned: z.number().int(),
  remaining: z.number().int(),
  /** (+) True when nothing was changed: the counts are what a real run would do. */
  dry_run: z.boolean().optional(),
});
export type AgingResponse = z.infer<typeof AgingResponse>;

export const DeletePatternResponse = z.object({ deleted: z.literal(true), pattern_key: PatternKey });
export type DeletePatternResponse = z.infer<typeof DeletePatternResponse>;

/** One exported pattern: every pattern field plus governance metadata; no vectors. */
export const ExportRecord = z.object({
  key: PatternKey,
  task: z.string(),
  code: z.string(),
  output: z.string().nullable(),
  eval_score: z.number(),
  success_score: z.number(),
  reuse_count: z.number().int(),
  run_id: z.string().nullable(),
  classification: Classification,
  source: Source,
  author: z.string().nullable(),
  expires_at: z.string().nullable(),
  redacted: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ExportRecord = z.infer<typeof ExportRecord>;

export const ExportResponse = z.object({ records: z.array(ExportRecord), count: z.number().int() });
export type ExportResponse = z.infer<typeof ExportResponse>;

/** Import accepts the export shape; fields other than task/code/eval_score are optional. */
export const ImportRecord = z.object({
  key: PatternKey.optional(),
  task: nonBlank(10_000),
  code: nonBlank(500_000),
  output: z.string().max(500_000).nullable().optional(),
  eval_score: z.number().min(0).max(10),
  success_score: z.number().min(0).max(10).optional(),
  reuse_count: z.number().int().min(0).optional(),
  run_id: z.string().max(200).nullable().optional(),
  classification: Classification.optional(),
  source: Source.optional(),
  author: z.string().max(200).nullable().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  redacted: z.boolean().optional(),
  created_at: z.iso.datetime({ offset: true }).optional(),
  updated_at: z.iso.datetime({ offset: true }).optional(),
});
export type ImportRecord = z.input<typeof ImportRecord>;

export const ImportRequest = z.object({
  records: z.array(ImportRecord).max(10_000, 'at most 10,000 records per request'),
  overwrite: z.boolean().default(false),
}).strict();
export type ImportRequest = z.input<typeof ImportRequest>;

export const ImportResponse = z.object({
  imported: z.number().int(),
  skipped: z.number().int(),
  total: z.number().int(),
});
export type ImportResponse = z.infer<typeof ImportResponse>;

export const SkillsRegisterRequest = z.object({
  pattern_key: PatternKey,
  skills: z.array(z.string().max(100).refine((s) => s.trim().length > 0, 'must not be blank')).min(1).max(100),
}).strict();
export const SkillsRegisterResponse = z.object({ pattern_key: PatternKey, skills: z.array(z.string()) });

export const SkillsSearchRequest = z.object({
  skills: z.array(z.string().max(100)).min(1).max(100),
  match_all: z.boolean().default(false),
}).strict();
export const SkillsSearchResponse = z.object({
  matches: z.array(z.object({
    pattern_key: PatternKey,
    skills: z.array(z.string()),
    pattern: z.object({ task: z.string(), code: z.string(), success_score: z.number(), reuse_count: z.number().int() }),
  })),
  count: z.number().int(),
});
export type SkillsSearchResponse = z.infer<typeof SkillsSearchResponse>;
