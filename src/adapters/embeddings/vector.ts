/**
 * Copies `values` into a Float32Array scaled to unit length. A zero vector stays zero, and so
 * does one with NaN or infinite parts (transformers.js normalises a text of unknown tokens
 * into NaNs): it has no direction, and NaNs would poison every cosine.
 */
export function toUnitVector(values: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(values);
  let sumSquares = 0;
  for (const x of out) sumSquares += x * x;
  const norm = Math.sqrt(sumSquares);
  if (!Number.isFinite(norm)) return out.fill(0);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] /= norm;
  return out;
}

/** Splits `items` into consecutive chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
