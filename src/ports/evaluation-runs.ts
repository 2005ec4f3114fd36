import type { EvaluationRun, RunCase, RunStatus } from '../contracts/evaluations.js';
import type { Scope } from '../core/types.js';

/** Which runs a listing returns; `before` is the id of the previous page's last run (keyset paging). */
export interface RunFilter {
  label?: string;
  branch?: string;
  status?: RunStatus;
  blessed?: boolean;
  /** Only runs created before this time (retention). */
  created_before?: string;
  before?: string;
  limit: number;
}

/**
 * (+) Evaluation runs and their cases (docs/behavior.md "Evaluation runs"). Run ids are
 * time-ordered, so newest first is id descending. A run's cases go with it.
 */
export interface EvaluationRunRepository {
  /** Stores new runs or replaces stored ones (same id), all or nothing. */
  putRuns(scope: Scope, runs: EvaluationRun[]): Promise<void>;
  /** One run, or null. */
  getRun(scope: Scope, id: string): Promise<EvaluationRun | null>;
  /** Newest first, at most `limit`. */
  listRuns(scope: Scope, filter: RunFilter): Promise<EvaluationRun[]>;
  /** Adds a case to a stored run, replacing its case of the same case_id; false when the run is absent. */
  putCase(scope: Scope, runId: string, c: RunCase): Promise<boolean>;
  /** The run's cases in the order they were first recorded ([] for an absent run). */
  listCases(scope: Scope, runId: string): Promise<RunCase[]>;
  /** Deletes runs with their cases; returns how many runs went. */
  deleteRuns(scope: Scope, ids: string[]): Promise<number>;
}
