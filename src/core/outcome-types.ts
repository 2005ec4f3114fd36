/**
 * The shapes that carry a recall's trace and the outcomes reported against it between the
 * storages, the recall service and the ranking (docs/behavior.md "Outcomes"). Pure data: the
 * storages keep them, the core ranks with them.
 */

import { OUTCOME_SOURCES } from './vocabulary.js';

/** Who judged a reuse: a test run, an LLM evaluator, a person, or the agent itself (the list lives in vocabulary.ts, which the contracts share). */
export { OUTCOME_SOURCES };
export type OutcomeSource = (typeof OUTCOME_SOURCES)[number];

/** A query vector quantised to int8 (value ≈ q / 127 · scale), enough to compare queries by meaning. */
export interface QuantisedVector {
  values: Int8Array;
  scale: number;
}

/** What a recall leaves behind so outcomes can be reported against it and ranking can learn from them. */
export interface RecallTrace {
  recall_id: string;
  at: string;
  /** The query as asked. */
  query: string;
  /** Its normalised wording (the key for "this exact wording was tried before"). */
  query_normalized: string;
  /** Null when the recall ran without a vector (keyword fallback). */
  query_vector: QuantisedVector | null;
  /** The returned matches' keys, in rank order. */
  pattern_keys: string[];
}

/** One reported outcome of reusing one pattern for one recall. */
export interface OutcomeReport {
  recall_id: string;
  pattern_key: string;
  passed: boolean;
  score: number | null;
  detail: string | null;
  source: OutcomeSource | null;
  at: string;
}

/**
 * An outcome as ranking reads it: the report with its recall's query, so ranking needs no join
 * (the storages keep the two together or join them on read).
 */
export interface OutcomeEvidence extends OutcomeReport {
  pattern_id: string;
  query: string;
  query_normalized: string;
  query_vector: QuantisedVector | null;
}
