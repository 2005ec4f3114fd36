import type { Tensor } from './safetensors.js';

/**
 * A [rows, dimension] table kept in its stored dtype. Decoding a 30k × 384 F16 table to F32
 * at load costs time and doubles memory for rows most texts never touch, so a row is
 * converted only when it is first added into a sum (and kept for the next ones, up to a bound).
 */
export interface EmbeddingTable {
  readonly rows: number;
  readonly dimension: number;
  readonly dtype: Tensor['dtype'];
  /** Adds row `id` into `sum` (length `dimension`). */
  addRow(id: number, sum: Float64Array): void;
}

/**
 * Decoded F16 rows kept per table: at most 8,192 rows (12.6 MB at 384 dimensions). Tasks
 * share most of their tokens, so recall after recall adds the same rows (embedding the
 * benchmark's distinct recall tasks: 22 → 17 µs each).
 */
const DECODED_ROWS_KEPT = 8_192;

/** Every half-precision bit pattern's value: one lookup per element instead of bit twiddling. */
let f16Values: Float32Array | null = null;

function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

function halfTable(): Float32Array {
  if (!f16Values) {
    const table = new Float32Array(65536);
    for (let bits = 0; bits < 65536; bits++) table[bits] = halfToFloat(bits);
    f16Values = table;
  }
  return f16Values;
}

/** Wraps a 2-D tensor (bytes already aligned by the reader) without copying it. */
export function embeddingTable(tensor: Tensor): EmbeddingTable {
  const [rows, dimension] = tensor.shape;
  const { bytes, dtype } = tensor;
  const base = { rows, dimension, dtype };
  switch (dtype) {
    case 'F32': {
      const values = new Float32Array(bytes.buffer, bytes.byteOffset, rows * dimension);
      return { ...base, addRow: (id, sum) => addValues(values, id * dimension, dimension, sum) };
    }
    case 'I8': {
      const values = new Int8Array(bytes.buffer, bytes.byteOffset, rows * dimension);
      return { ...base, addRow: (id, sum) => addValues(values, id * dimension, dimension, sum) };
    }
    case 'F16': {
      const bits = new Uint16Array(bytes.buffer, bytes.byteOffset, rows * dimension);
      const decode = halfTable();
      // Rows decoded once are kept (up to DECODED_ROWS_KEPT, then all let go): adding a float
      // row costs less than a table lookup per element, and the sums are the same to the bit.
      const decoded = new Map<number, Float32Array>();
      return {
        ...base,
        addRow(id, sum) {
          let row = decoded.get(id);
          if (row === undefined) {
            if (decoded.size >= DECODED_ROWS_KEPT) decoded.clear();
            const start = id * dimension;
            row = new Float32Array(dimension);
            for (let i = 0; i < dimension; i++) row[i] = decode[bits[start + i]];
            decoded.set(id, row);
          }
          addValues(row, 0, dimension, sum);
        },
      };
    }
  }
}

function addValues(values: Float32Array | Int8Array, start: number, dimension: number, sum: Float64Array): void {
  for (let i = 0; i < dimension; i++) sum[i] += values[start + i];
}
