import type { PatternRecord } from './types.js';

/**
 * The learn rules (docs/behavior.md "Learn"): where a run lands. Pure: the service finds the
 * near-identical pattern, takes the id and the time, and writes what these return.
 */

/** One run to store, after redaction. */
export interface LearnRun {
  task: string;
  code: string;
  output: string | null;
  run_id: string | null;
  author: string | null;
  redacted: boolean;
  eval_score: number;
  classification: PatternRecord['classification'];
  source: PatternRecord['source'];
  expires_at: string | null;
  /** ISO time of the learn. */
  now: string;
}

/** What a run does to a near-identical stored pattern. */
export type LandedRun = { op: 'keep'; id: string } | { op: 'replace'; pattern: PatternRecord };

/**
 * A run of a task already stored: a better score replaces the old solution in place (key and
 * reuse_count kept); otherwise the stored pattern stays as it is.
 */
export function landOnExisting(existing: PatternRecord, run: LearnRun): LandedRun {
  if (!(run.eval_score > existing.success_score)) return { op: 'keep', id: existing.id };
  return {
    op: 'replace',
    pattern: {
      ...existing,
      code: run.code,
      output: run.output,
      eval_score: run.eval_score,
      success_score: run.eval_score,
      run_id: run.run_id ?? existing.run_id,
      redacted: existing.redacted || run.redacted,
      updated_at: run.now,
      // The replacement carries a fresh score: decay counts from now, not from the first learn.
      last_aged_at: run.now,
    },
  };
}

/** A run of a new task: a pattern of its own, its score both eval and success score. */
export function newPattern(id: string, run: LearnRun): PatternRecord {
  return {
    id,
    task: run.task,
    code: run.code,
    output: run.output,
    eval_score: run.eval_score,
    success_score: run.eval_score,
    reuse_count: 0,
    run_id: run.run_id,
    classification: run.classification,
    source: run.source,
    author: run.author,
    expires_at: run.expires_at,
    redacted: run.redacted,
    created_at: run.now,
    updated_at: run.now,
    last_aged_at: null,
  };
}
