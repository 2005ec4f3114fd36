import type { EvaluatorScore } from './evaluation.js';

/**
 * What a cached judge verdict is keyed on (docs/behavior.md "Judge cache"): the evaluated text
 * (task, code and output, by hash) and the WHOLE judge configuration. Leaving any setting that
 * changes verdicts out of the key would serve a verdict made under another configuration, so
 * every one is here: provider, model, the judge prompt's version and rubric (the system prompt),
 * the number of evaluators, the temperature and the answer limit. `sample` is the repeat index:
 * repeats of a case are independent judgements, each with its own cache slot.
 */

/** Bumped when the key's layout changes, so old entries stop matching instead of being misread. */
export const JUDGE_CACHE_KEY_VERSION = 1;

export interface JudgeConfig {
  provider: string;
  model: string;
  /** The evaluator prompt template's version (services/evaluate.ts JUDGE_PROMPT_VERSION). */
  prompt_version: string;
  /** sha256 of the rubric: the evaluators' system prompt. */
  rubric_hash: string;
  num_evals: number;
  temperature: number;
  max_tokens: number;
}

export interface JudgedText {
  task_hash: string;
  code_hash: string;
  output_hash: string;
}

/**
 * The canonical text a cache key is the hash of: a JSON array in a fixed order, so equal
 * inputs give equal text whatever order the objects were built in.
 */
export function judgeKeyMaterial(text: JudgedText, judge: JudgeConfig, sample: number): string {
  return JSON.stringify([
    JUDGE_CACHE_KEY_VERSION,
    text.task_hash, text.code_hash, text.output_hash,
    judge.provider, judge.model, judge.prompt_version, judge.rubric_hash,
    judge.num_evals, judge.temperature, judge.max_tokens,
    sample,
  ]);
}

/** One cached verdict: every evaluator's score (all of them answered) and what judging cost then. */
export interface CachedJudgement {
  scores: EvaluatorScore[];
  /** Tokens the original judging used (a hit spends none). */
  tokens: { input: number; output: number };
  /** When it was judged. */
  created_at: string;
}

/** A project keeps at most this many verdicts; the oldest go first (JSON storage bounds its file with it, PostgreSQL prunes to it). */
export const JUDGE_CACHE_MAX_ENTRIES = 5_000;
