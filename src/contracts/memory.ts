import { z } from 'zod';
import { Classification, PatternKey, ReuseTier, Source, Timestamp, nonBlank, queryBool, queryInt, text } from './common.js';
import { ErrorBody } from './errors.js';
import { ID, MAX_IMPORT_RECORDS, MAX_OUTCOME_DETAIL_CHARS, OUTCOME_SOURCES, MAX_TASK_CHARS, RECALL_BATCH_MAX } from '../core/vocabulary.js';
import { anyImportRecord, type ReferenceRecordV1 } from './reference-import.js';
import { EvaluationRun, RunCase, RunId } from './evaluations.js';

export const LearnRequest = z.object({
  task: nonBlank(MAX_TASK_CHARS),
  code: nonBlank(500_000),
  eval_score: z.number().min(0).max(10),
  output: text(500_000).optional(),
  run_id: text(200).optional(),
  classification: Classification.default('internal'),
  source: Source.default('api'),
  author: text(200).optional(),
  expires_at: Timestamp.optional(),
  /** (+) Ask the LLM before merging into a near-identical pattern. */
  verify_duplicates: z.boolean().optional(),
}).strict();
export type LearnRequest = z.input<typeof LearnRequest>;
/** What learn works with: the request after parsing (defaults applied). */
export type LearnInput = z.output<typeof LearnRequest>;

/** (+) The LLM's verdict on a near-identical pattern (learn with verify_duplicates). */
export const DuplicateCheck = z.object({ verdict: z.enum(['same', 'different']), reason: z.string(), model: z.string() });
export type DuplicateCheck = z.infer<typeof DuplicateCheck>;

export const LearnResponse = z.object({
  stored: z.boolean(),
  pattern_count: z.number().int(),
  redacted: z.literal(true).optional(),
  pattern_key: PatternKey.optional(),
  /** (+) With verify_duplicates and a near-identical pattern: the LLM's verdict (null: the check failed). */
  duplicate_check: DuplicateCheck.nullable().optional(),
  warnings: z.array(z.string()).optional(),
});
export type LearnResponse = z.infer<typeof LearnResponse>;

const recallFields = {
  task: nonBlank(MAX_TASK_CHARS),
  limit: z.number().int().min(1).max(50).default(5),
  offset: z.number().int().min(0).max(10_000).default(0),
  deduplicate: z.boolean().default(true),
  eval_weighted: z.boolean().default(true),
  classification: Classification.optional(),
  source: Source.optional(),
  min_score: z.number().min(0).max(10).optional(),
  // (+) Recency weighting (the reference client sends both).
  recency_weight: z.number().min(0).max(1).default(0),
  recency_half_life_days: z.number().positive().default(30),
  /** (+) Add each match's score parts and the tier policy in force (docs/behavior.md "Recall" 5). */
  explain: z.boolean().optional(),
};

export const RecallRequest = z.object({
  ...recallFields,
  readonly: z.boolean().default(false),
  /** (+) LLM check of the page's reusable matches; the server's default is SERVICE_RECALL_VERIFY. */
  verify: z.boolean().optional(),
}).strict();
export type RecallRequest = z.input<typeof RecallRequest>;
/**
 * What recall works with: either request after parsing (defaults applied). `readonly` is the
 * route's choice of side effects, not a search parameter; the GET form never has `verify`.
 */
export type RecallInput = Omit<z.output<typeof RecallRequest>, 'readonly'>;

/** GET /v1/recall: same fields from the query string, always read-only. */
export const RecallQueryString = z.object({
  task: nonBlank(MAX_TASK_CHARS),
  limit: queryInt(1, 50).default(5),
  offset: queryInt(0, 10_000).default(0),
  deduplicate: queryBool.default(true),
  eval_weighted: queryBool.default(true),
  classification: Classification.optional(),
  source: Source.optional(),
  min_score: z.coerce.number().min(0).max(10).optional(),
  recency_weight: z.coerce.number().min(0).max(1).default(0),
  recency_half_life_days: z.coerce.number().positive().default(30),
  explain: queryBool.optional(),
}).strict();
/** The GET form's query as a client sends it: the POST fields but `readonly` (always) and `verify` (never). */
export type RecallGetQuery = Omit<RecallRequest, 'readonly' | 'verify'>;

export const ReuseVerification = z.object({ verdict: ReuseTier, reason: z.string(), model: z.string() });
export type ReuseVerification = z.infer<typeof ReuseVerification>;

/** (+) A failure that lowered a match: the query it failed for and how close that is to this one. */
export const OutcomeFailure = z.object({
  recall_id: z.string(),
  query: z.string(),
  at: z.string(),
  similarity: z.number(),
  penalty: z.number(),
});

/** (+) With explain, when outcomes were reported for the pattern: what they did to its score (docs/behavior.md "Outcome ranking"). */
export const OutcomeExplain = z.object({
  adjustment: z.number(),
  local: z.number(),
  exact: z.enum(['failed', 'passed']).nullable(),
  exact_move: z.number(),
  failures: z.array(OutcomeFailure),
});
export type OutcomeExplain = z.infer<typeof OutcomeExplain>;

/** (+) A reported failure's detail on a similar query: why reusing this pattern went wrong before. */
export const OutcomeLesson = z.object({
  detail: z.string(),
  at: z.string(),
  similarity: z.number(),
  query: z.string(),
});
export type OutcomeLesson = z.infer<typeof OutcomeLesson>;

/** (+) With explain: how a match was scored and which tier rule fired. */
export const RecallExplain = z.object({
  cosine: z.number(),
  centered_cosine: z.number(),
  /** The vector side as ranked: the centred cosine with the project's principal directions removed (the centred cosine when none are). */
  residual_cosine: z.number(),
  /** BM25F over task and code. */
  bm25: z.number(),
  /** What the code field added to `bm25`. */
  code_bm25: z.number(),
  /** The character n-gram similarity (0 when that side score is off). */
  ngram: z.number(),
  blended: z.number(),
  eval_factor: z.number(),
  recency_factor: z.number(),
  score: z.number(),
  tier_rule: z.string(),
  tier_threshold: z.number().nullable(),
  outcome: OutcomeExplain.optional(),
});
export type RecallExplain = z.infer<typeof RecallExplain>;

/** (+) With explain: the tier policy in force for the project. */
export const TierPolicy = z.object({
  policy: z.enum(['calibrated', 'fixed']),
  duplicate_threshold: z.number().nullable(),
  adapt_threshold: z.number(),
  source: z.string(),
});
export type TierPolicy = z.infer<typeof TierPolicy>;

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
  /** (+) With verify: the LLM's verdict on this match, or null when it was not verified. */
  verification: ReuseVerification.nullable().optional(),
  /** (+) With explain: the score's parts and the tier rule. */
  explain: RecallExplain.optional(),
  /** (+) Up to three reported failures of this pattern on similar queries, nearest first (absent: none). */
  lessons: z.array(OutcomeLesson).optional(),
});
export type RecallMatch = z.infer<typeof RecallMatch>;

export const RecallResponse = z.object({
  /** (+) This recall's id: outcomes of reusing its matches are reported against it (POST /v1/outcomes). */
  recall_id: z.string(),
  matches: z.array(RecallMatch),
  has_more: z.boolean(),
  next_offset: z.number().int().nullable(),
  /** (+) With verify: what went wrong (LLM failure, unreadable answer, matches over the limit). */
  warnings: z.array(z.string()).optional(),
  /** (+) With explain: the tier policy in force for the project. */
  tier_policy: TierPolicy.optional(),
});
export type RecallResponse = z.infer<typeof RecallResponse>;

/**
 * (+) POST /v1/recall/batch: many recalls in one request (what `recall --batch` sends). Each
 * item is a whole POST /v1/recall body, checked on its own, so one bad item is answered as an
 * error in its place and the others still run.
 */
export const RecallBatchRequest = z.object({
  requests: z.array(z.unknown()).min(1).max(RECALL_BATCH_MAX, `at most ${RECALL_BATCH_MAX} recalls per batch`),
}).strict();
export type RecallBatchRequest = { requests: RecallRequest[] };

/** (+) One item's refusal: the status and error body POST /v1/recall would have answered. */
export const RecallBatchError = z.object({ status: z.number().int(), body: ErrorBody });

/** (+) The answers in request order: each the POST /v1/recall answer, or its error. */
export const RecallBatchResponse = z.object({
  results: z.array(z.union([z.object({ result: RecallResponse }).strict(), z.object({ error: RecallBatchError }).strict()])),
});
export type RecallBatchResponse = z.infer<typeof RecallBatchResponse>;

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
export type AgingInput = z.output<typeof AgingRequest>;

export const AgingResponse = z.object({
  aged: z.number().int(),
  pruned: z.number().int(),
  remaining: z.number().int(),
  /** (+) True when nothing was changed: the counts are what a real run would do. */
  dry_run: z.boolean().optional(),
});
export type AgingResponse = z.infer<typeof AgingResponse>;

/** (+) GET /v1/patterns/{key}/history: what the export record leaves out (the console's pattern page). */
export const PatternHistoryResponse = z.object({
  pattern_key: PatternKey,
  /** The pattern's skill tags (POST /v1/skills/register), sorted. */
  skills: z.array(z.string()),
  /** Its eval observations (learns that landed on it, evaluate with pattern_key), newest first, at most 20. */
  eval_scores: z.array(z.number()),
});
export type PatternHistoryResponse = z.infer<typeof PatternHistoryResponse>;

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

/** Path parameters of the `/v1/patterns/{key}` routes (the key URL-encoded as one segment, slash as %2F). */
export const PatternKeyParams = z.object({ key: PatternKey });

export const ExportResponse = z.object({ records: z.array(ExportRecord), count: z.number().int() });
export type ExportResponse = z.infer<typeof ExportResponse>;

/** Import accepts the export shape; fields other than task/code/eval_score are optional. */
export const ImportRecord = z.object({
  key: PatternKey.optional(),
  task: nonBlank(MAX_TASK_CHARS),
  code: nonBlank(500_000),
  output: text(500_000).nullable().optional(),
  eval_score: z.number().min(0).max(10),
  success_score: z.number().min(0).max(10).optional(),
  reuse_count: z.number().int().min(0).optional(),
  run_id: text(200).nullable().optional(),
  classification: Classification.optional(),
  source: Source.optional(),
  author: text(200).nullable().optional(),
  expires_at: Timestamp.nullable().optional(),
  redacted: z.boolean().optional(),
  created_at: Timestamp.optional(),
  updated_at: Timestamp.optional(),
});
export type ImportRecord = z.input<typeof ImportRecord>;
/** A flat import record after parsing. */
export type ImportRecordInput = z.output<typeof ImportRecord>;

/** An import record in any accepted form: ours (flat), or the reference system's (versioned). */
export const AnyImportRecord = anyImportRecord(ImportRecord);
export type AnyImportRecord = ImportRecord | ReferenceRecordV1 | { version: unknown; key?: unknown };

/** (+) A recall id as recall answers carry it (path-safe). */
export const RecallId = z.string().regex(ID, 'must be a recall_id as a recall answered it');
/** (+) One recall trace with its outcomes, as the NDJSON export writes it and import reads it. */
export const TracedOutcomesLine = z.object({
  type: z.literal('outcomes'),
  tenant_id: z.string().optional(),
  project_id: z.string().optional(),
  trace: z.object({
    recall_id: RecallId,
    at: Timestamp,
    query: text(MAX_TASK_CHARS),
    query_normalized: text(MAX_TASK_CHARS),
    /** base64 of the int8 values, and their scale; null without a query vector. */
    query_vector: z.object({ values: z.string().max(100_000), scale: z.number() }).nullable(),
    pattern_keys: z.array(PatternKey).max(1_000),
  }).strict(),
  outcomes: z.array(z.object({
    pattern_key: PatternKey,
    passed: z.boolean(),
    score: z.number().min(0).max(10).nullable(),
    detail: text(MAX_OUTCOME_DETAIL_CHARS).nullable(),
    source: z.enum(OUTCOME_SOURCES).nullable(),
    at: Timestamp,
  }).strict()).max(1_000),
}).strict();
export type TracedOutcomesLine = z.input<typeof TracedOutcomesLine>;

/**
 * (+) One evaluation run with its cases in their recorded order, as the NDJSON export writes it
 * and import reads it (docs/behavior.md "Evaluation runs").
 */
export const EvaluationRunLine = z.object({
  type: z.literal('evaluation_run'),
  tenant_id: z.string().optional(),
  project_id: z.string().optional(),
  run: EvaluationRun.extend({ id: RunId }),
  cases: z.array(RunCase).max(MAX_IMPORT_RECORDS),
}).strict();
export type EvaluationRunLine = z.input<typeof EvaluationRunLine>;

export const ImportRequest = z.object({
  records: z.array(AnyImportRecord).max(MAX_IMPORT_RECORDS, `at most ${MAX_IMPORT_RECORDS.toLocaleString('en-US')} records per request`),
  overwrite: z.boolean().default(false),
  /** (+) Recall traces with their outcomes (the NDJSON export's `type: "outcomes"` lines), restored after the records. */
  outcomes: z.array(TracedOutcomesLine).max(MAX_IMPORT_RECORDS).optional(),
  /** (+) Evaluation runs with their cases (the NDJSON export's `type: "evaluation_run"` lines); a run id already stored is skipped. */
  evaluation_runs: z.array(EvaluationRunLine).max(MAX_IMPORT_RECORDS).optional(),
}).strict();
export type ImportRequest = z.input<typeof ImportRequest>;
export type ImportInput = z.output<typeof ImportRequest>;

export const ImportResponse = z.object({
  imported: z.number().int(),
  skipped: z.number().int(),
  total: z.number().int(),
  /**
   * (+) Records that cannot be imported (an unknown version, a key outside `patterns/`), with
   * the reason; present only when there are some. `skipped` counts them and existing keys.
   */
  skipped_records: z.array(z.object({ index: z.number().int(), key: z.string().nullable(), reason: z.string() })).optional(),
  /** (+) Recall traces with outcomes restored (present when the request carried some). */
  outcomes_imported: z.number().int().optional(),
  /** (+) Evaluation runs restored, and those skipped because their id was already stored (present when the request carried runs). */
  evaluation_runs_imported: z.number().int().optional(),
  evaluation_runs_skipped: z.number().int().optional(),
});
export type ImportResponse = z.infer<typeof ImportResponse>;

export const SkillsRegisterRequest = z.object({
  pattern_key: PatternKey,
  skills: z.array(text(100).refine((s) => s.trim().length > 0, 'must not be blank')).min(1).max(100),
}).strict();
export type SkillsRegisterRequest = z.input<typeof SkillsRegisterRequest>;
export type SkillsRegisterInput = z.output<typeof SkillsRegisterRequest>;
/** (+) `registered`: how many unique tags the pattern now has (the reference client reads it). */
export const SkillsRegisterResponse = z.object({ pattern_key: PatternKey, skills: z.array(z.string()), registered: z.number().int() });
export type SkillsRegisterResponse = z.infer<typeof SkillsRegisterResponse>;

const SkillList = z.array(text(100)).min(1).max(100);
/** The tag list is `skills`, or `required` as the reference client names it (one of the two). */
export const SkillsSearchRequest = z.object({
  skills: SkillList.optional(),
  required: SkillList.optional(),
  match_all: z.boolean().default(false),
}).strict().superRefine((v, ctx) => {
  if ((v.skills === undefined) === (v.required === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['skills'], message: 'give the tag list as either skills or required (exactly one)' });
  }
}).transform(({ skills, required, match_all }) => ({ skills: skills ?? required ?? [], match_all }));
export type SkillsSearchRequest = z.input<typeof SkillsSearchRequest>;
/** After parsing: one tag list, whichever name it came under. */
export type SkillsSearchInput = z.output<typeof SkillsSearchRequest>;

export const SkillMatch = z.object({
  pattern_key: PatternKey,
  skills: z.array(z.string()),
  pattern: z.object({ task: z.string(), code: z.string(), success_score: z.number(), reuse_count: z.number().int() }),
});
export type SkillMatch = z.infer<typeof SkillMatch>;

export const SkillsSearchResponse = z.object({
  matches: z.array(SkillMatch),
  count: z.number().int(),
});
export type SkillsSearchResponse = z.infer<typeof SkillsSearchResponse>;


/** (+) POST /v1/outcomes: how reusing one match of one recall went (docs/behavior.md "Outcomes"). */
export const OutcomeRequest = z.object({
  recall_id: RecallId,
  pattern_key: PatternKey,
  passed: z.boolean(),
  score: z.number().min(0).max(10).optional(),
  /** Why it failed (or passed): a lesson for the next agent that recalls the pattern. */
  detail: text(MAX_OUTCOME_DETAIL_CHARS).optional(),
  source: z.enum(OUTCOME_SOURCES).optional(),
}).strict();
export type OutcomeRequest = z.infer<typeof OutcomeRequest>;

export const OutcomeResponse = z.object({
  recall_id: z.string(),
  pattern_key: PatternKey,
  passed: z.boolean(),
  score: z.number().nullable(),
  detail: z.string().nullable(),
  source: z.enum(OUTCOME_SOURCES).nullable(),
  at: z.string(),
  /** True when this report replaced an earlier one of the same recall and pattern. */
  replaced: z.boolean(),
});
export type OutcomeResponse = z.infer<typeof OutcomeResponse>;

/** (+) One reported outcome of a pattern, with the query it was recalled for. */
export const PatternOutcome = z.object({
  recall_id: z.string(),
  query: z.string(),
  passed: z.boolean(),
  score: z.number().nullable(),
  detail: z.string().nullable(),
  source: z.enum(OUTCOME_SOURCES).nullable(),
  at: z.string(),
});
export type PatternOutcome = z.infer<typeof PatternOutcome>;

export const PatternOutcomesQuery = z.object({ limit: queryInt(1, 100).default(20) }).strict();

/** (+) GET /v1/patterns/{key}/outcomes: the pattern's outcomes, newest first. */
export const PatternOutcomesResponse = z.object({ pattern_key: PatternKey, outcomes: z.array(PatternOutcome) });
export type PatternOutcomesResponse = z.infer<typeof PatternOutcomesResponse>;
