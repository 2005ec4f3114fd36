import { z } from 'zod';
import { CASE_CHANGES, RUN_STATUSES } from '../core/vocabulary.js';
import { queryBool, queryInt, text } from './common.js';

/**
 * (+) Wire schemas of evaluation runs (docs/behavior.md "Evaluation runs"): every evaluation is
 * kept as a run of cases; a run can be compared with a baseline run case by case and, when it
 * passed, blessed as the baseline of its label. Fields filled by later features (repeats, the
 * judge cache, cost) are null until a run records them.
 */

/** A run's label or a git branch: what CI jobs name runs by (`main`, `release/2.1`, `pr-42`). */
export const RUN_LABEL = /^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,199}$/;
const RUN_LABEL_RULE = '1-200 letters, digits or . _ / : @ + -, starting with a letter or digit';
export const RunLabel = z.string().regex(RUN_LABEL, `must be ${RUN_LABEL_RULE}`);

/** Run ids are the service's time-ordered ids (services/ids.ts). */
export const RunId = z.string().regex(/^[0-9a-z]{18}$/, 'must be an evaluation run id (18 letters and digits)');

/**
 * running: cases are still being added; passed: every case passed its gate and nothing
 * regressed or went missing against the baseline; regressed: the gate passed but a case got
 * worse than in the baseline; failed: a case failed its gate, could not be evaluated, or a
 * baseline case is missing.
 */
export const RunStatus = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatus>;

/** How a case compares with the same case (same case_id) of the baseline run. */
export const CaseChange = z.enum(CASE_CHANGES);
export type CaseChange = z.infer<typeof CaseChange>;

export const RunGit = z.object({
  commit: z.string().nullable(),
  branch: z.string().nullable(),
});
export type RunGit = z.infer<typeof RunGit>;

/** The judge configuration the run's cases were scored with. */
export const RunJudge = z.object({
  provider: z.string().nullable(),
  model: z.string().nullable(),
  prompt_version: z.string(),
  evaluators: z.number().int().min(1),
  temperature: z.number(),
});
export type RunJudge = z.infer<typeof RunJudge>;

/** The quality gate every case of the run is held to (set when the run is created). */
export const RunGate = z.object({
  min_score: z.number().min(0).max(10).nullable(),
  fail_on_adversarial: z.boolean(),
  fail_on_high_variance: z.boolean(),
  /** How a repeated case's repeats make its verdict (absent: `all`). */
  reducer: z.string().optional(),
});
export type RunGate = z.infer<typeof RunGate>;

export const Tokens = z.object({ input: z.number().int().min(0), output: z.number().int().min(0) });
export type Tokens = z.infer<typeof Tokens>;

export const RunSummary = z.object({
  cases: z.number().int().min(0),
  passed: z.number().int().min(0),
  failed: z.number().int().min(0),
  /** passed / cases (null for a run without cases). */
  pass_rate: z.number().min(0).max(1).nullable(),
  /** With repeats: the share of cases that passed every repeat (null without repeats). */
  pass_hat_k: z.number().min(0).max(1).nullable(),
  flaky: z.number().int().min(0),
  cost_usd: z.number().min(0).nullable(),
  tokens: Tokens.nullable(),
  cache_hits: z.number().int().min(0),
  cache_misses: z.number().int().min(0),
  duration_ms: z.number().min(0),
});
export type RunSummary = z.infer<typeof RunSummary>;

/** Counts of a comparison with the baseline, by CaseChange. */
export const ComparisonCounts = z.object({
  improved: z.number().int().min(0),
  regressed: z.number().int().min(0),
  unchanged: z.number().int().min(0),
  new: z.number().int().min(0),
  missing: z.number().int().min(0),
});
export type ComparisonCounts = z.infer<typeof ComparisonCounts>;

export const EvaluationRun = z.object({
  id: z.string(),
  created_at: z.string(),
  /** When the run was finished (null while running). */
  finished_at: z.string().nullable(),
  label: z.string().nullable(),
  git: RunGit,
  ci_provider: z.string().nullable(),
  judge: RunJudge,
  gate: RunGate,
  status: RunStatus,
  summary: RunSummary,
  /** The run this one was compared with when it was finished (null: none). */
  baseline_id: z.string().nullable(),
  /** The comparison's counts (null without a baseline). */
  comparison: ComparisonCounts.nullable(),
  /** This run is the baseline of its label (at most one run per label is). */
  blessed: z.boolean(),
});
export type EvaluationRun = z.infer<typeof EvaluationRun>;

export const CaseEvaluator = z.object({
  /** 1-based, in the order the evaluators answered. */
  evaluator: z.number().int().min(1),
  score: z.number().min(0).max(10),
  feedback: z.string(),
});
export type CaseEvaluator = z.infer<typeof CaseEvaluator>;

export const RunCase = z.object({
  /** The case's identity within its run and across runs (a batch line's id, else derived from the task). */
  case_id: z.string(),
  name: z.string(),
  task: z.string().nullable(),
  code: z.string(),
  output: z.string().nullable(),
  /** sha256 hex of the text ("" when absent). */
  task_hash: z.string(),
  code_hash: z.string(),
  output_hash: z.string(),
  evaluators: z.array(CaseEvaluator),
  median: z.number().min(0).max(10).nullable(),
  variance: z.number().min(0).nullable(),
  adversarial: z.boolean().nullable(),
  passed: z.boolean(),
  /** Why the case failed its gate (empty when it passed). */
  gate_failures: z.array(z.string()),
  /** With repeats: the reasons its failing repeats gave, each once, also when the reducer passed the case. */
  repeat_failures: z.array(z.string()).optional(),
  repeats: z.number().int().min(1),
  pass_rate: z.number().min(0).max(1).nullable(),
  flaky: z.boolean().nullable(),
  tokens: Tokens.nullable(),
  cost_usd: z.number().min(0).nullable(),
  duration_ms: z.number().min(0).nullable(),
  /** Every repeat came from the judge cache (null: not evaluated). */
  cache_hit: z.boolean().nullable(),
  /** How many of the repeats came from the judge cache (null or absent: not counted; the summary then counts the case once). */
  cache_hits: z.number().int().min(0).nullable().optional(),
  /** Evaluators that failed; any failure fails the case's gate. */
  failed_evaluators: z.number().int().min(0),
  /** Why the case could not be evaluated (null: it was). */
  error: z.string().nullable(),
  evaluated_at: z.string(),
});
export type RunCase = z.infer<typeof RunCase>;

// ---------------------------------------------------------------- create and finish

export const CreateRunRequest = z.object({
  label: RunLabel.optional(),
  git: z.object({ commit: text(200).nullable().optional(), branch: text(200).nullable().optional() }).strict().optional(),
  ci_provider: text(100).optional(),
  /** Evaluators per case (the judge configuration's `evaluators`). */
  num_evals: z.number().int().min(1).max(10).default(3),
  gate: z.object({
    min_score: z.number().min(0).max(10).nullable().optional(),
    fail_on_adversarial: z.boolean().optional(),
    fail_on_high_variance: z.boolean().optional(),
    /** How repeats of a case (evaluate's `sample` > 0) make its verdict: all (default), majority or min-rate:R (checked by the service). */
    reducer: text(40).optional(),
  }).strict().optional(),
}).strict();
export type CreateRunRequest = z.input<typeof CreateRunRequest>;
export type CreateRunInput = z.output<typeof CreateRunRequest>;

export const FinishRunRequest = z.object({
  /** A run id, or a label whose blessed run is the baseline. */
  baseline: text(200).optional(),
  /** Bless the run as its label's baseline when it passed. */
  bless_on_pass: z.boolean().default(false),
  /** The noise margin of the comparison (default: REGRESSION_DELTA, docs/behavior.md "Evaluation runs"). */
  regression_delta: z.number().min(0).max(10).optional(),
  /** Case ids the client could not evaluate (each counts as failed). */
  not_evaluated: z.array(text(200)).max(100_000).default([]),
}).strict();
export type FinishRunRequest = z.input<typeof FinishRunRequest>;
export type FinishRunInput = z.output<typeof FinishRunRequest>;

// ---------------------------------------------------------------- read

export const RunParams = z.object({ id: RunId });
export const CompareParams = z.object({ id: RunId, baseline: text(200).pipe(z.string().min(1)) });
export const CompareQuery = z.object({
  regression_delta: z.coerce.number().min(0).max(10).optional(),
}).strict();
export type CompareQuery = { regression_delta?: number };

export const RunListQuery = z.object({
  limit: queryInt(1, 100).default(20),
  /** The previous page's `next_cursor`, as it came (opaque). */
  cursor: z.string().min(1).max(200).optional(),
  label: RunLabel.optional(),
  branch: text(200).optional(),
  status: RunStatus.optional(),
  /** Only blessed runs (the baselines). */
  blessed: queryBool.optional(),
}).strict();
export type RunListQuery = Omit<z.input<typeof RunListQuery>, 'limit' | 'blessed'> & { limit?: number; blessed?: boolean };
export type RunListInput = z.output<typeof RunListQuery>;

export const RunListResponse = z.object({
  /** Newest first. */
  runs: z.array(EvaluationRun),
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: z.string().nullable(),
});
export type RunListResponse = z.infer<typeof RunListResponse>;

export const RunDetailResponse = z.object({
  run: EvaluationRun,
  /** In the order they were evaluated. */
  cases: z.array(RunCase),
});
export type RunDetailResponse = z.infer<typeof RunDetailResponse>;

export const CaseComparison = z.object({
  case_id: z.string(),
  name: z.string(),
  change: CaseChange,
  /** Median in the baseline and in this run (null where the case is absent or was not scored). */
  baseline_median: z.number().nullable(),
  median: z.number().nullable(),
  /** median − baseline_median (null unless both exist). */
  delta: z.number().nullable(),
  baseline_passed: z.boolean().nullable(),
  passed: z.boolean().nullable(),
  flaky: z.boolean().nullable(),
});
export type CaseComparison = z.infer<typeof CaseComparison>;

export const CompareResponse = z.object({
  run: EvaluationRun,
  baseline: EvaluationRun,
  /** The noise margin: a drop of the median by more than this (or a pass turning into a fail) is a regression. */
  delta: z.number().min(0),
  counts: ComparisonCounts,
  /** pass_rate − baseline pass_rate (null unless both exist). */
  pass_rate_delta: z.number().nullable(),
  /** Regressed first, then missing, new, improved, unchanged; by case_id within each. */
  cases: z.array(CaseComparison),
});
export type CompareResponse = z.infer<typeof CompareResponse>;

export const FinishRunResponse = z.object({
  run: EvaluationRun,
  /** The comparison with the baseline (null when none was asked for). */
  comparison: CompareResponse.nullable(),
});
export type FinishRunResponse = z.infer<typeof FinishRunResponse>;
