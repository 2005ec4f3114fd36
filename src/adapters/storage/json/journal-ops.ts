import type { OutcomeReport } from '../../../core/outcome-types.js';
import type { FeedbackCluster, MetricsCounters, PatternRecord, RoiEvent } from '../../../core/types.js';
import type { TraceLine } from './outcome-state.js';

/**
 * One journal line per mutation. Every op is applied by the same code live and on replay
 * (scope-state.ts), so a reloaded scope is exactly the scope that acknowledged the writes.
 * `v` holds a base64 Float32 vector (see engine/vector-codec.ts).
 */
export type JournalOp =
  | { op: 'put'; p: PatternRecord; v?: string }
  | { op: 'del'; id: string }
  | { op: 'vec'; id: string; v: string }
  | { op: 'reuse'; ids: string[]; d: number; at: string }
  | { op: 'eval'; id: string; s: number; at: string }
  | { op: 'fb'; c: FeedbackCluster[] }
  | { op: 'fbdel'; ids: string[] }
  | { op: 'skills'; id: string; k: string[] }
  | { op: 'run'; s: number }
  | { op: 'recall'; r: boolean }
  /** Each run counter raised to at least this value (migrate-data's copy of a source's counters). */
  | { op: 'raise'; m: MetricsCounters }
  | { op: 'roi'; e: RoiEvent }
  /** A recall's trace (docs/behavior.md "Outcomes"). */
  | { op: 'trace'; t: TraceLine }
  /** A reported outcome (replaces the same recall and pattern's earlier one). */
  | { op: 'outcome'; o: OutcomeReport }
  /** An outcome's success credit: success_score + d, kept within [0, 10]. */
  | { op: 'credit'; id: string; d: number }
  /** Retention: traces and outcomes dated before this time go. */
  | { op: 'opurge'; before: string }
  /** Several ops in one line, so they are durable together or not at all (import batches). */
  | { op: 'batch'; ops: JournalOp[] };

/** A journal line: the op plus its sequence number within the scope. */
export type JournalLine = JournalOp & { seq: number };

/** Snapshot lines: a header, one line per item, and a trailer proving the file is whole. */
export type SnapshotLine =
  | { t: 'header'; version: 1; seq: number }
  | { t: 'p'; p: PatternRecord; v?: string }
  | { t: 'e'; id: string; s: number; at: string }
  | { t: 'f'; c: FeedbackCluster }
  | { t: 'k'; id: string; k: string[] }
  | { t: 'm'; runs: number; successes: number; eval_sum: number; recalls: number; reusing_recalls: number }
  | { t: 'a'; e: RoiEvent }
  | { t: 't'; r: TraceLine }
  | { t: 'o'; o: OutcomeReport }
  | { t: 'end'; lines: number };
