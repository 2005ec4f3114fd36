import { describe, expect, it } from 'vitest';
import {
  createInt8Dots,
  int8KnownAnswersHold,
  INT8_STRIDE_ALIGN_BYTES,
  QUERY_OFFSET,
  QUERY_STEPS,
  relaxedInt8Works,
  type Int8DotsFn,
  type Int8QueryLayout,
} from '../../src/adapters/storage/json/engine/int8-kernel.js';
import { wasm, type WasmMemory } from '../../src/adapters/storage/json/engine/dot-kernel.js';

/** A seeded generator (the test's data must not change between runs). */
function seeded(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}

const STRIDE = 6 * INT8_STRIDE_ALIGN_BYTES; // 384
const ROWS = 500;
// Layout: query slot (room for i16) | rows | scales | sums | scores.
const ROWS_AT = 2 * STRIDE;
const SCALES_AT = ROWS_AT + ROWS * STRIDE;
const SUMS_AT = SCALES_AT + 4 * ROWS;
const OUT_AT = SUMS_AT + 4 * ROWS;

/** A memory of random int8 rows (the whole ±127 range), scales and byte sums, and a query of ±QUERY_STEPS steps. */
function filledMemory(seed: number): { memory: WasmMemory; query: number[] } {
  const random = seeded(seed);
  const memory = new wasm.Memory({ initial: Math.ceil((OUT_AT + 4 * ROWS) / 65536) });
  const bytes = new Int8Array(memory.buffer);
  const scales = new Float32Array(memory.buffer, SCALES_AT, ROWS);
  const sums = new Int32Array(memory.buffer, SUMS_AT, ROWS);
  for (let r = 0; r < ROWS; r++) {
    let sum = 0;
    for (let j = 0; j < STRIDE; j++) {
      const v = Math.round((2 * random() - 1) * 127);
      bytes[ROWS_AT + r * STRIDE + j] = v;
      sum += v;
    }
    sums[r] = sum;
    scales[r] = 0.001 + random() / 100;
  }
  const query = Array.from({ length: STRIDE }, () => Math.round((2 * random() - 1) * QUERY_STEPS));
  return { memory, query };
}

/** The kernel's scores of every row, with the query written in its layout. */
function scoresOf(memory: WasmMemory, query: number[], kernel: { dots: Int8DotsFn; query: Int8QueryLayout }): number[] {
  if (kernel.query === 'i16') new Int16Array(memory.buffer, 0, STRIDE).set(query);
  else new Uint8Array(memory.buffer, 0, STRIDE).set(query.map((v) => v + QUERY_OFFSET));
  kernel.dots(0, ROWS_AT, ROWS, STRIDE, OUT_AT, SCALES_AT, SUMS_AT);
  return Array.from(new Float32Array(memory.buffer, OUT_AT, ROWS));
}

describe('JSON vector index: the int8 kernels', () => {
  it('relaxed (where it runs), plain SIMD and JavaScript give the same score for every row', () => {
    for (const seed of [1, 2, 3]) {
      const { memory, query } = filledMemory(seed);
      const best = scoresOf(memory, query, createInt8Dots(memory));
      const plain = scoresOf(memory, query, createInt8Dots(memory, false, false, false));
      const js = scoresOf(memory, query, createInt8Dots(memory, true));
      expect(best).toEqual(js);
      expect(plain).toEqual(js);
      // The reference: the integer dot product times the row's scale, rounded once to f32.
      const bytes = new Int8Array(memory.buffer);
      const scales = new Float32Array(memory.buffer, SCALES_AT, ROWS);
      for (const r of [0, 17, ROWS - 1]) {
        let dot = 0;
        for (let j = 0; j < STRIDE; j++) dot += bytes[ROWS_AT + r * STRIDE + j] * query[j];
        expect(js[r]).toBe(Math.fround(dot * scales[r]));
      }
      expect(new Set(js).size).toBeGreaterThan(ROWS / 2);
    }
  });

  it('the best kernel is the relaxed one exactly when the runtime runs it right', () => {
    const { memory } = filledMemory(4);
    expect(createInt8Dots(memory).query).toBe(relaxedInt8Works() ? 'offset-u8' : 'i16');
    expect(createInt8Dots(memory, false, false, false).query).toBe('i16');
    expect(createInt8Dots(memory, true).query).toBe('i16');
  });

  it('known answers pass a right kernel and fail a wrong one (so an engine computing otherwise keeps the plain kernel)', () => {
    expect(int8KnownAnswersHold((m) => createInt8Dots(m, false, false, false).dots, 'i16')).toBe(true);
    expect(int8KnownAnswersHold((m) => createInt8Dots(m, true).dots, 'i16')).toBe(true);
    if (relaxedInt8Works()) expect(int8KnownAnswersHold((m) => createInt8Dots(m).dots, 'offset-u8')).toBe(true);
    // Twice the dot product: what Node 20's fused relaxed "dot and add" instruction returned.
    const doubled = (m: WasmMemory): Int8DotsFn => {
      const right = createInt8Dots(m, true).dots;
      return (q, rows, n, stride, out, scales, sums) => {
        right(q, rows, n, stride, out, scales, sums);
        const f = new Float32Array(m.buffer, out, n);
        for (let i = 0; i < n; i++) f[i] *= 2;
      };
    };
    expect(int8KnownAnswersHold(doubled, 'i16')).toBe(false);
    // The offset layout read as if it were the plain one: the offset is never taken back off.
    expect(int8KnownAnswersHold((m) => createInt8Dots(m, true).dots, 'offset-u8')).toBe(false);
  });
});
