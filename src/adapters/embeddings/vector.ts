/** Copies `values` into a Float32Array scaled to unit length (a zero vector stays zero). */
export function toUnitVector(values: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(values);
  let sumSquares = 0;
  for (const x of out) sumSquares += x * x;
  const norm = Math.sqrt(sumSquares);
  // A zero vector has no direction; dividing would turn it into NaNs that poison every cosine.
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] /= norm;
  return out;
}

/** Splits `items` into consecutive chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
