import { z } from 'zod';
import { MAX_TASK_CHARS } from '../core/vocabulary.js';
import { PatternKey, ReuseTier, nonBlank, queryInt, text } from './common.js';
import { RunId } from './evaluations.js';

/** Wire schemas of the LLM endpoints (evaluate, compose, evolve) and the feedback store. */

// ---------------------------------------------------------------- evaluate

export const EvaluateRequest = z.object({
  // Omitted is allowed (the spec makes it optional); given, it must say something: a blank
  // task would be sent to every evaluator for nothing.
  task: nonBlank(MAX_TASK_CHARS).optional(),
  code: nonBlank(500_000),
  output: text(500_000).optional(),
  num_evals: z.number().int().min(1).max(10).default(3),
  /** (+) The median is recorded as an eval observation of this pattern. */
  pattern_key: PatternKey.optional(),
  /** (+) Add the case to this running evaluation run (docs/behavior.md "Evaluation runs"); without it the evaluation is a run of one case. */
  run_id: RunId.optional(),
  /** (+) The case's identity across runs (compared with the baseline's case of the same id); default: derived from the task. */
  case_id: nonBlank(200).optional(),
  /** (+) How reports name the case (default: the case id). */
  name: nonBlank(200).optional(),
}).strict();
export type EvaluateRequest = z.input<typeof EvaluateRequest>;
export type EvaluateInput = z.output<typeof EvaluateRequest>;

const score = z.number().min(0).max(10);

export const EvaluatorScores = z.object({
  task_alignment: score,
  code_quality: score,
  workspace_usage: score,
  robustness: score,
  overall: score,
  feedback: z.string(),
  /** (+) This evaluator judged the output faked or hard-coded. */
  hardcoded: z.boolean(),
});
export type EvaluatorScores = z.infer<typeof EvaluatorScores>;

export const EvaluateResponse = z.object({
  median_score: score,
  variance: z.number().min(0),
  high_variance: z.boolean(),
  feedback: z.string(),
  adversarial_detected: z.boolean(),
  scores: z.array(EvaluatorScores),
  /** (+) Evaluators that failed (provider error or malformed twice); the rest were aggregated. */
  failed_evaluators: z.number().int().min(0),
  /** (+) Echoed when the median was recorded against a pattern. */
  pattern_key: PatternKey.optional(),
  /** (+) Echoed with a request's run_id: the run, the case's id there, and whether it passed the run's gate. */
  run_id: z.string().optional(),
  case_id: z.string().optional(),
  passed: z.boolean().optional(),
  gate_failures: z.array(z.string()).optional(),
});
export type EvaluateResponse = z.infer<typeof EvaluateResponse>;

// ---------------------------------------------------------------- compose

export const ComposeRequest = z.object({ task: nonBlank(MAX_TASK_CHARS) }).strict();
export type ComposeRequest = z.input<typeof ComposeRequest>;
export type ComposeInput = z.output<typeof ComposeRequest>;

export const PipelineStage = z.object({
  name: z.string(),
  task: z.string(),
  reads: z.array(z.string()),
  writes: z.array(z.string()),
  reuse_tier: ReuseTier,
  similarity: z.number().min(0).max(1),
  code: z.string(),
  /** (+) The recalled pattern, null when nothing was stored. */
  pattern_key: PatternKey.nullable(),
});
export type PipelineStage = z.infer<typeof PipelineStage>;

export const ComposeResponse = z.object({
  task: z.string(),
  stages: z.array(PipelineStage),
  valid: z.boolean(),
  contract_errors: z.array(z.string()),
});
export type ComposeResponse = z.infer<typeof ComposeResponse>;

// ---------------------------------------------------------------- evolve

export const EvolveRequest = z.object({
  role: nonBlank(1_000),
  current_prompt: nonBlank(100_000),
  num_issues: z.number().int().min(1).max(20).default(5),
}).strict();
export type EvolveRequest = z.input<typeof EvolveRequest>;
export type EvolveInput = z.output<typeof EvolveRequest>;

export const EvolveResponse = z.object({
  improved_prompt: z.string(),
  changes: z.array(z.string()),
  issues_addressed: z.array(z.string()),
  accepted: z.boolean(),
  reason: z.string(),
  /** (+) Judge medians (null when no judging happened). */
  current_score: score.nullable(),
  candidate_score: score.nullable(),
});
export type EvolveResponse = z.infer<typeof EvolveResponse>;

// ---------------------------------------------------------------- analyze-failures

export const AnalyzeFailuresRequest = z.object({
  min_count: z.number().int().min(1).max(1_000_000).default(1),
}).strict();
export type AnalyzeFailuresRequest = z.input<typeof AnalyzeFailuresRequest>;
export type AnalyzeFailuresInput = z.output<typeof AnalyzeFailuresRequest>;

export const FailureCluster = z.object({
  representative: z.string(),
  members: z.array(z.string()),
  total_count: z.number().int(),
  avg_score: z.number(),
});
export type FailureCluster = z.infer<typeof FailureCluster>;

export const AnalyzeFailuresResponse = z.object({ clusters: z.array(FailureCluster) });
export type AnalyzeFailuresResponse = z.infer<typeof AnalyzeFailuresResponse>;

// ---------------------------------------------------------------- feedback

/** POST /v1/feedback/decay takes no fields (an empty object or no body). */
export const FeedbackDecayRequest = z.object({}).strict();

export const FeedbackQuery = z.object({
  task_type: text(200).optional(),
  limit: queryInt(1, 100).default(10),
  offset: queryInt(0, 10_000).default(0),
}).strict();
/** The query as a client sends it (the numbers are coerced from text on the server). */
export type FeedbackListQuery = Omit<z.input<typeof FeedbackQuery>, 'limit' | 'offset'> & { limit?: number; offset?: number };
export type FeedbackQuery = z.input<typeof FeedbackQuery>;
export type FeedbackQueryInput = z.output<typeof FeedbackQuery>;

export const FeedbackItem = z.object({
  text: z.string(),
  count: z.number().int(),
  score: z.number(),
  last_seen: z.string(),
});
export type FeedbackItem = z.infer<typeof FeedbackItem>;

export const FeedbackResponse = z.object({
  feedback: z.array(FeedbackItem),
  has_more: z.boolean(),
  next_offset: z.number().int().nullable(),
});
export type FeedbackResponse = z.infer<typeof FeedbackResponse>;

export const FeedbackDecayResponse = z.object({
  decayed: z.number().int(),
  pruned: z.number().int(),
});
export type FeedbackDecayResponse = z.infer<typeof FeedbackDecayResponse>;
