import type { QuantisedVector, RecallTrace } from './outcome-types.js';
import { termsOf } from './text.js';
import { ID } from './vocabulary.js';

/**
 * The pure rules of a recall's trace (docs/behavior.md "Outcomes"): the normalised wording that
 * says "this exact wording was asked before", the int8 form of the query vector, and the shape
 * of a recall id.
 */

/** Recall ids are minted like pattern ids ([0-9a-z]); anything path-safe of that length is accepted. */
export function isRecallId(value: unknown): value is string {
  return typeof value === 'string' && ID.test(value);
}

/**
 * The wording's words, lower-case, one space apart: case, punctuation and spacing do not make
 * a different wording. A query with no words at all (emoji only) keeps its trimmed text.
 */
export function normalizeWording(text: string): string {
  const words = termsOf(text.normalize('NFKC'));
  return words.length > 0 ? words.join(' ') : text.trim();
}

/** int8 with one scale per vector: q = round(v / max|v| · 127); enough to compare queries by meaning. */
export function quantiseVector(v: Float32Array): QuantisedVector {
  let max = 0;
  for (let i = 0; i < v.length; i++) {
    const a = Math.abs(v[i]);
    if (a > max) max = a;
  }
  const values = new Int8Array(v.length);
  if (max > 0 && Number.isFinite(max)) {
    for (let i = 0; i < v.length; i++) values[i] = Math.round((v[i] / max) * 127);
  }
  return { values, scale: Number.isFinite(max) ? max : 0 };
}

/** Back to floats (≈ the original vector). */
export function dequantiseVector(q: QuantisedVector): Float32Array {
  const out = new Float32Array(q.values.length);
  const f = q.scale / 127;
  for (let i = 0; i < out.length; i++) out[i] = q.values[i] * f;
  return out;
}

/** The trace a recall leaves: what was asked and which patterns it returned, in rank order. */
export function recallTrace(recallId: string, at: string, query: string, vector: Float32Array | null, patternKeys: string[]): RecallTrace {
  return {
    recall_id: recallId,
    at,
    query,
    query_normalized: normalizeWording(query),
    query_vector: vector ? quantiseVector(vector) : null,
    pattern_keys: patternKeys,
  };
}


/** Ranking reads at most this many newest outcomes per pattern (the storages cap evidenceFor at it). */
export const OUTCOME_EVIDENCE_PER_PATTERN = 32;

/** The int8 vector as base64 of its bytes (export lines); pure JS, so core stays free of Node APIs. */
export function quantisedToBase64(q: QuantisedVector): string {
  let bin = '';
  for (let i = 0; i < q.values.length; i++) bin += String.fromCharCode(q.values[i] & 0xff);
  return btoa(bin);
}

/** Back from quantisedToBase64; null when the text is not base64. */
export function quantisedFromBase64(text: string, scale: number): QuantisedVector | null {
  let bin: string;
  try {
    bin = atob(text);
  } catch {
    return null;
  }
  const values = new Int8Array(bin.length);
  for (let i = 0; i < bin.length; i++) values[i] = (bin.charCodeAt(i) << 24) >> 24;
  return { values, scale };
}
