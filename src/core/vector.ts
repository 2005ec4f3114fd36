/**
 * Embedding vectors that carry no meaning. An embedder may hand back a zero vector (a static
 * model for text with no known tokens: emoji, U+200B, combining marks…) or NaN (a model that
 * normalised that zero). Cosine similarity is undefined for both, and PostgreSQL refuses NaN,
 * so the services treat such a task as having no vector: stored with a zero vector, never
 * found by meaning, found by keyword recall instead (the same on every storage).
 */

/** True when every component is finite and at least one is not zero. */
export function isMeaningfulVector(v: Float32Array): boolean {
  let nonZero = false;
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (!Number.isFinite(x)) return false;
    if (x !== 0) nonZero = true;
  }
  return nonZero;
}

/** The vector itself when meaningful, else an all-zero vector of the same length (storable anywhere). */
export function storableVector(v: Float32Array): Float32Array {
  return isMeaningfulVector(v) ? v : new Float32Array(v.length);
}
