import { describe, expect, it } from 'vitest';
import { Int8Rows } from '../../src/adapters/storage/json/int8-rows.js';
import { VectorIndex } from '../../src/adapters/storage/json/vector-index.js';

const DIM = 384;

/** Deterministic uniform numbers (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

/**
 * Clustered unit vectors, like the benchmark's store: noisy copies of a few bases, so many
 * rows sit close together and the top 10 are separated by small margins (the hard case for a
 * quantised scan).
 */
function clustered(count: number, bases: number, noise: number, seed: number): Float32Array[] {
  const random = seeded(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const base = Array.from({ length: bases }, () => unit(Float32Array.from({ length: DIM }, normal)));
  return Array.from({ length: count }, (_, i) => unit(Float32Array.from(base[i % bases], (x) => x + noise * normal())));
}

function filled(vectors: Float32Array[], preferJs = false): VectorIndex<{ n: number }> {
  const index = new VectorIndex<{ n: number }>(preferJs);
  vectors.forEach((v, i) => index.set(`p${String(i).padStart(6, '0')}`, { n: i }, v));
  return index;
}

function recallAt10(index: VectorIndex<{ n: number }>, queries: Float32Array[], accept?: (item: { n: number }) => boolean): number {
  let found = 0;
  let wanted = 0;
  for (const q of queries) {
    const exact = index.searchExact(q, 10, accept).map((h) => h.id);
    const fast = new Set(index.search(q, 10, accept).map((h) => h.id));
    wanted += exact.length;
    found += exact.filter((id) => fast.has(id)).length;
  }
  return found / wanted;
}

describe('JSON vector index (int8 candidates, exact re-score)', () => {
  it('returns exactly the float scan\'s hits, scores and order for small sets', () => {
    const vectors = clustered(1_500, 30, 0.03, 1);
    const index = filled(vectors);
    for (const q of clustered(20, 30, 0.03, 2)) {
      expect(index.search(q, 25)).toEqual(index.searchExact(q, 25));
      expect(index.search(q, 5, (item) => item.n % 3 === 0)).toEqual(index.searchExact(q, 5, (item) => item.n % 3 === 0));
    }
  });

  it('keeps recall@10 at or above 0.99 against the exact scan on a clustered 20k store, filtered or not', () => {
    const index = filled(clustered(20_000, 200, 0.025, 3));
    const queries = clustered(100, 200, 0.025, 4);
    expect(recallAt10(index, queries)).toBeGreaterThanOrEqual(0.99);
    expect(recallAt10(index, queries, (item) => item.n % 2 === 1)).toBeGreaterThanOrEqual(0.99);
  });

  it('gives every hit its exact cosine, best first, ties broken by id', () => {
    const index = filled(clustered(5_000, 50, 0.025, 5));
    const exactScores = new Map<string, number>();
    for (const q of clustered(10, 50, 0.025, 6)) {
      for (const h of index.searchExact(q, 5_000)) exactScores.set(h.id, h.score);
      const hits = index.search(q, 10);
      expect(hits).toHaveLength(10);
      for (const h of hits) expect(h.score).toBe(exactScores.get(h.id));
      for (let i = 1; i < hits.length; i++) {
        const [a, b] = [hits[i - 1], hits[i]];
        expect(a.score > b.score || (a.score === b.score && a.id < b.id)).toBe(true);
      }
    }
  });

  it('stays in step with the float rows through replacements and deletions (rows moved into holes)', () => {
    const vectors = clustered(6_000, 60, 0.025, 7);
    const index = filled(vectors);
    // Delete every third row (the last row moves into each hole) and re-point some survivors.
    for (let i = 0; i < vectors.length; i += 3) index.remove(`p${String(i).padStart(6, '0')}`);
    const replacements = clustered(500, 60, 0.025, 8);
    replacements.forEach((v, i) => index.set(`p${String(i * 3 + 1).padStart(6, '0')}`, { n: i * 3 + 1 }, v));
    expect(index.count).toBe(4_000);
    const queries = clustered(50, 60, 0.025, 9);
    expect(recallAt10(index, queries)).toBeGreaterThanOrEqual(0.99);
    const deleted = new Set(Array.from({ length: 2_000 }, (_, i) => `p${String(i * 3).padStart(6, '0')}`));
    for (const q of queries) for (const h of index.search(q, 50)) expect(deleted.has(h.id)).toBe(false);
  });

  it('gives the same answers with the JavaScript kernels as with WebAssembly', () => {
    const vectors = clustered(4_000, 40, 0.025, 10);
    const wasm = filled(vectors);
    const js = filled(vectors, true);
    for (const q of clustered(10, 40, 0.025, 11)) {
      expect(js.search(q, 10).map((h) => h.id)).toEqual(wasm.search(q, 10).map((h) => h.id));
    }
  });

  it('scores every int8 row exactly as the JavaScript kernel does (query widened to i16, odd dimensions padded)', () => {
    for (const dim of [DIM, 100]) {
      const vectors = clustered(3_000, 30, 0.05, 12).map((v) => v.subarray(0, dim));
      const rows = (preferJs: boolean) => {
        const r = new Int8Rows(preferJs);
        r.reshape(dim);
        r.ensureCapacity(vectors.length);
        vectors.forEach((v, i) => r.set(i, v));
        return r;
      };
      const [wasm, js] = [rows(false), rows(true)];
      for (const q of clustered(5, 30, 0.05, 13)) {
        const query = q.subarray(0, dim);
        const fromWasm = Array.from(wasm.scores(query, vectors.length));
        expect(fromWasm).toEqual(Array.from(js.scores(query, vectors.length)));
        expect(new Set(fromWasm).size).toBeGreaterThan(100);
      }
    }
  });
});
