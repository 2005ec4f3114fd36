import type { ReuseTier, TierThresholds } from './types.js';

/**
 * Cosine similarity of two vectors in [-1, 1]. A zero vector has no direction, so its
 * similarity to anything is 0 (not NaN, which would poison ranking and sorting).
 * Vectors of different dimension come from different models: that is a bug, so it throws.
 */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) {
    throw new RangeError(`cosine: dimension mismatch (${a.length} vs ${b.length})`);
  }
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    normA += a[i] * a[i];
    normB += b[i] * b[i];
  }
  if (normA === 0 || normB === 0) return 0;
  const value = dot / (Math.sqrt(normA) * Math.sqrt(normB));
  // Float rounding can push identical vectors a hair past 1.
  return Math.max(-1, Math.min(1, value));
}

/** The wire's `similarity` is in [0, 1]; negative cosines mean "unrelated", NaN means nothing. */
export function clampSimilarity(x: number): number {
  if (Number.isNaN(x)) return 0;
  return Math.max(0, Math.min(1, x));
}

/** The spec's thresholds (set for MiniLM-class models); used when nothing else is known. */
export const SPEC_TIERS: Readonly<TierThresholds> = Object.freeze({ duplicate: 0.92, adapt: 0.7 });

/** Tier from RAW similarity (never the quality-weighted score): duplicate ≥ t.duplicate, adapt ≥ t.adapt. */
export function reuseTier(similarity: number, t: TierThresholds): ReuseTier {
  if (similarity >= t.duplicate) return 'duplicate';
  if (similarity >= t.adapt) return 'adapt';
  return 'fresh';
}
