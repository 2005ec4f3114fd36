import { describe, expect, it } from 'vitest';
import { Int8Rows } from '../../src/adapters/storage/json/engine/int8-rows.js';
import { SCORE_BLOCK_ROWS, selectTop, selectTopByBlocks } from '../../src/adapters/storage/json/engine/row-selection.js';

/** Block maxima as Int8Rows.blockMaxima gives them (whole blocks only). */
function maximaOf(scores: Float32Array): Float32Array {
  const blocks = Math.floor(scores.length / SCORE_BLOCK_ROWS);
  return Float32Array.from({ length: blocks }, (_, b) => Math.max(...scores.subarray(b * SCORE_BLOCK_ROWS, (b + 1) * SCORE_BLOCK_ROWS)));
}

/** The selected rows in one order (score, then id), to compare selections found in different orders. */
function sorted(selected: { rows: Int32Array; scores: Float64Array }, ids: string[]): [string, number][] {
  return Array.from(selected.rows, (r, i): [string, number] => [ids[r], selected.scores[i]])
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

describe('row selection by blocks', () => {
  it('keeps the same rows as the full selection, ties on scores included, whatever the size and k', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    for (const n of [0, 5, 16, 17, 300, 1_000, 5_003]) {
      // Few distinct values, so many rows tie with the k-th best and the id decides.
      const scores = Float32Array.from({ length: n }, () => Math.round(random() * 40) / 8 - 2);
      const ids = Array.from({ length: n }, (_, i) => `p${String((i * 7919) % 100_003).padStart(6, '0')}`);
      for (const k of [1, 10, 64, 80, 400]) {
        const full = sorted(selectTop(scores, Math.min(k, n), ids, [] as unknown[]), ids);
        expect(sorted(selectTopByBlocks(scores, maximaOf(scores), Math.min(k, n), ids), ids)).toEqual(full);
      }
    }
  });

  it('gives the block maxima of the int8 scores with the WebAssembly kernel as the JavaScript one does', () => {
    let seed = 3;
    const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5;
    const dim = 40;
    const vectors = Array.from({ length: 1_003 }, () => Float32Array.from({ length: dim }, random));
    const query = Float32Array.from({ length: dim }, random);
    const [wasm, js] = [false, true].map((preferJs) => {
      const rows = new Int8Rows(preferJs);
      rows.reshape(dim);
      rows.ensureCapacity(vectors.length);
      vectors.forEach((v, i) => rows.set(i, v));
      const scores = Array.from(rows.scores(query, vectors.length));
      return { scores, maxima: Array.from(rows.blockMaxima(vectors.length)) };
    });
    expect(wasm.maxima).toEqual(js.maxima);
    expect(wasm.maxima).toEqual(Array.from(maximaOf(Float32Array.from(wasm.scores))));
    expect(wasm.maxima).toHaveLength(Math.floor(vectors.length / SCORE_BLOCK_ROWS));
  });
});
