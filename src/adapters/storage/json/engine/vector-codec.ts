/**
 * Vectors are persisted as base64 of their little-endian Float32 bytes: about 2.7 characters
 * per dimension instead of ~20 for a JSON number array, and loading decodes it straight into
 * the index (VectorIndex.setEncoded).
 */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function encodeVector(vec: Float32Array): string {
  if (!LITTLE_ENDIAN) throw new Error('JSON storage needs a little-endian platform');
  return Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength).toString('base64');
}

/**
 * A unit-length copy, so cosine similarity is a plain dot product at search time. A zero or
 * non-finite vector becomes all zeros (similarity 0 to everything) instead of NaN.
 */
export function normalized(vec: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vec.length; i++) sum += vec[i] * vec[i];
  const out = new Float32Array(vec.length);
  if (!(sum > 0) || !Number.isFinite(sum)) return out;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < vec.length; i++) out[i] = vec[i] * inv;
  return out;
}

export function assertVector(vec: unknown): asserts vec is Float32Array {
  if (!(vec instanceof Float32Array) || vec.length === 0) {
    throw new TypeError('vector must be a non-empty Float32Array');
  }
}
