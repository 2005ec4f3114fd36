import { availableParallelism } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { Int8Rows } from '../../src/adapters/storage/json/engine/int8-rows.js';
import { defaultScanThread, MAX_SCAN_SLOTS, ScanThread } from '../../src/adapters/storage/json/engine/scan-thread.js';
import { relaxedInt8Works, sharedInt8Modules } from '../../src/adapters/storage/json/engine/int8-kernel.js';
import { VectorIndex } from '../../src/adapters/storage/json/engine/vector-index.js';
import { WorkBudget } from '../../src/core/slices.js';

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

/** An index of `vectors` (ids p000000…); without a scan thread unless one is given. */
function filled(vectors: Float32Array[], preferJs = false, thread: ScanThread | null = null): VectorIndex<{ n: number }> {
  const index = new VectorIndex<{ n: number }>(preferJs, thread);
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

  it('searchInSlices gives search\'s hits, scores and order, pausing between slices of the ordering', async () => {
    // Past EXACT_SCAN_MAX_ROWS (int8 candidates) and below it, k small and k past the size.
    const index = filled(clustered(3_000, 30, 0.03, 5));
    let pauses = 0;
    const budget = new WorkBudget(async () => {
      pauses++;
    }, 32);
    for (const q of clustered(4, 30, 0.03, 6)) {
      for (const k of [10, 400, 5_000]) {
        expect(await index.searchInSlices(q, k, undefined, budget)).toEqual(index.search(q, k));
        const odd = (item: { n: number }) => item.n % 2 === 1;
        expect(await index.searchInSlices(q, k, odd, budget)).toEqual(index.search(q, k, odd));
      }
    }
    expect(pauses).toBeGreaterThan(100);
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

  it("cosinesOf gives any row the exact cosine a search gives it; 0 for a missing row or another dimension", () => {
    const vectors = clustered(3_000, 30, 0.025, 12);
    const index = filled(vectors);
    index.remove('p000007');
    const q = clustered(1, 30, 0.025, 13)[0];
    const ids = ['p002999', 'p000007', 'p000000', 'nope', 'p001500', 'p002999'];
    const exact = new Map(index.searchExact(q, 3_000).map((h) => [h.id, h.score]));
    const got = index.cosinesOf(q, ids);
    expect(got).toHaveLength(ids.length);
    ids.forEach((id, i) => expect(got[i], id).toBe(exact.get(id) ?? 0));
    expect([...index.cosinesOf(new Float32Array(DIM + 1).fill(0.1), ids)]).toEqual(ids.map(() => 0));
    expect([...filled([]).cosinesOf(q, ids)]).toEqual(ids.map(() => 0));
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

describe('JSON vector index: int8 rows through growth and moves', () => {
  it('every kernel scores the rows alike after the memory grew several times and rows moved into holes (scales and byte sums kept in step)', () => {
    const vectors = clustered(1_500, 20, 0.05, 14);
    const rows = (preferJs: boolean) => {
      const r = new Int8Rows(preferJs);
      r.reshape(DIM);
      let capacity = 0;
      vectors.forEach((v, i) => {
        // Grown as the index grows it: doubling, so the scales and sums move up each time.
        if (i >= capacity) r.ensureCapacity((capacity = Math.max(64, 2 * capacity)));
        r.set(i, v);
      });
      // Rows moved into holes, as deletions do.
      for (const [from, to] of [[1_499, 3], [1_498, 700], [1_497, 0]]) r.move(from, to);
      return r;
    };
    const [wasm, js] = [rows(false), rows(true)];
    for (const q of clustered(4, 20, 0.05, 15)) {
      expect(Array.from(wasm.scores(q, 1_497))).toEqual(Array.from(js.scores(q, 1_497)));
    }
  });
});

describe('JSON vector index: writes while a sliced search is handed back', () => {
  const id = (i: number) => `p${String(i).padStart(6, '0')}`;

  /**
   * Runs searchInSlices with a budget whose pauses make the writes of `writes` (one batch per
   * pause, while the search is still scanning), then expects exactly what a one-go search on
   * the final state gives: every row present at the end scored once, with its current vector.
   */
  async function expectFinalStateAnswer(
    index: VectorIndex<{ n: number }>, q: Float32Array, k: number, writes: (() => void)[], accept?: (item: { n: number }) => boolean,
  ): Promise<void> {
    let pauses = 0;
    let written = 0;
    const budget = new WorkBudget(async () => {
      pauses++;
      if (index.scanning > 0 && written < writes.length) writes[written++]();
    }, 8);
    const hits = await index.searchInSlices(q, k, accept, budget);
    expect(written).toBe(writes.length); // every write landed mid-scan
    expect(pauses).toBeGreaterThan(writes.length);
    expect(hits).toEqual(index.search(q, k, accept));
    expect(new Set(hits.map((h) => h.id)).size).toBe(hits.length);
  }

  for (const [name, rows, k] of [['float scan', 1_500, 25], ['int8 scan + exact re-score', 3_000, 10]] as const) {
    it(`${name}: inserts, rewrites and deletes (rows moved into scanned holes) are all seen`, async () => {
      const vectors = clustered(rows, 30, 0.03, 20);
      const q = clustered(1, 30, 0.03, 21)[0];
      const index = filled(vectors);
      const near = (seed: number) => unit(Float32Array.from(q, (x, i) => x + 0.001 * Math.sin(seed + i)));
      // The last rows are the best matches: a delete near the front moves them into scanned holes.
      for (let i = rows - 3; i < rows; i++) index.set(id(i), { n: i }, near(i));
      const best = index.search(q, k).map((h) => h.id);
      await expectFinalStateAnswer(index, q, k, [
        () => index.remove(id(0)), // the last row moves to row 0, already scanned
        () => index.remove(id(1)),
        () => index.set('z-new', { n: -1 }, Float32Array.from(q)), // appended: scanned later
        () => index.remove(best[3]), // a row the search had probably kept
        () => index.set(id(2), { n: 2 }, near(99)), // rewritten below the cursor: scanned again
        () => index.set(best[5], { n: 5 }, unit(Float32Array.from(q, (x) => -x))), // a kept row now the worst
      ]);
      const hits = index.search(q, k).map((h) => h.id);
      expect(hits).toContain('z-new');
      expect(hits).toContain(id(rows - 1));
      expect(hits).toContain(id(2));
      expect(hits).not.toContain(best[3]);
      expect(hits).not.toContain(best[5]);
    });
  }

  it('scans again when a kept row is deleted after the rows that would replace it were let go', async () => {
    const index = filled(clustered(1_500, 30, 0.03, 27));
    const q = clustered(1, 30, 0.03, 28)[0];
    // The three best rows sit in the first block: kept, with every later row refused for room.
    for (const i of [5, 6, 7]) index.set(id(i), { n: i }, unit(Float32Array.from(q, (x, j) => x + 0.001 * Math.cos(i * j))));
    // Deleted a few pauses in, once the first block has been offered in full.
    const wait = Array.from({ length: 5 }, () => () => undefined);
    await expectFinalStateAnswer(index, q, 3, [...wait, () => index.remove(id(6))]);
  });

  it('a kept row deleted at every pause (passes repeated, or one scan in one go at the end): still the final answer', async () => {
    const index = filled(clustered(1_500, 30, 0.03, 31));
    const q = clustered(1, 30, 0.03, 32)[0];
    // At every pause of a scan: delete the best row now (one each pass has kept, once past its first block).
    let deletes = 0;
    const budget = new WorkBudget(async () => {
      if (index.scanning === 0) return;
      index.remove(index.search(q, 1)[0].id);
      deletes++;
    }, 8);
    const hits = await index.searchInSlices(q, 3, undefined, budget);
    expect(deletes).toBeGreaterThan(3 * 6); // several pauses in each of the sliced passes
    expect(hits).toEqual(index.search(q, 3));
  });

  it('a row added after a delete while the last block is being offered is still scanned', async () => {
    // One block holds every row; keeping 100 of them pauses mid-block (a unit each).
    const index = filled(clustered(200, 10, 0.03, 29));
    const q = clustered(1, 10, 0.03, 30)[0];
    await expectFinalStateAnswer(index, q, 100, [() => {
      index.remove(id(10));
      index.set('z-new', { n: -1 }, Float32Array.from(q));
    }]);
  });

  it('keeps up with a write at every pause (a stream of learns and deletes), filtered or not', async () => {
    const vectors = clustered(3_000, 30, 0.03, 22);
    const index = filled(vectors);
    const extra = clustered(400, 30, 0.03, 23);
    for (const [k, accept] of [[10, undefined], [50, (item: { n: number }) => item.n % 2 === 0], [900, undefined]] as const) {
      const q = clustered(1, 30, 0.03, 24 + k)[0];
      const writes = extra.slice(0, 10).map((v, i) => () => {
        index.set(`x${k}-${i}`, { n: 10_000 + i }, v);
        index.remove(id(7 * i + k));
      });
      await expectFinalStateAnswer(index, q, k, writes, accept);
    }
  });

  it('a sliced search of a dimension that changed meanwhile fails like a new search would', async () => {
    const index = filled(clustered(1_000, 10, 0.03, 25));
    const q = clustered(1, 10, 0.03, 26)[0];
    const budget = new WorkBudget(async () => {
      if (index.scanning > 0) index.set('other', { n: 0 }, unit(Float32Array.from({ length: 64 }, (_, i) => i + 1)));
    }, 8);
    await expect(index.searchInSlices(q, 10, undefined, budget)).rejects.toThrow(/dimensions/);
  });
});

describe('JSON vector index: the int8 scan on the scan thread', () => {
  const modules = sharedInt8Modules();
  const budget = () => new WorkBudget(async () => undefined, 1_000_000);

  /**
   * A thread that takes every search, even a lone one (the default keeps a lone search on the
   * main thread), and counts the answers it gave (null: none came, the caller searched itself).
   */
  class CountingThread extends ScanThread {
    answers = 0;
    override wanted(): boolean {
      return true;
    }
    override async scan(...args: Parameters<ScanThread['scan']>): ReturnType<ScanThread['scan']> {
      const result = await super.scan(...args);
      if (result) this.answers++;
      return result;
    }
  }

  /** Runs `body` with a thread of its own, ended afterwards whatever happens. */
  async function withThread<T extends ScanThread>(thread: T, body: (thread: T) => Promise<void>): Promise<void> {
    try {
      await body(thread);
    } finally {
      await thread.stop();
    }
  }

  it.runIf(availableParallelism() > 1)('is there on a machine of more than one core (shared WebAssembly memory)', () => {
    expect(modules).not.toBeNull();
    expect(defaultScanThread()).toBeInstanceOf(ScanThread);
  });

  it('by default takes a search only while another one is under way', async () => {
    await withThread(new ScanThread(modules!), async (thread) => {
      const used = vi.spyOn(thread, 'scan');
      const index = filled(clustered(3_000, 30, 0.03, 50), false, thread);
      const [q1, q2, q3] = clustered(3, 30, 0.03, 51);
      expect(await index.searchInSlices(q1, 10, undefined, budget())).toEqual(index.search(q1, 10));
      expect(used).not.toHaveBeenCalled();
      // Two at once: the first runs here up to its first turn's end, the second goes to the thread meanwhile.
      const pausing = new WorkBudget(async () => { await new Promise((r) => setImmediate(r)); }, 1);
      const both = await Promise.all([index.searchInSlices(q2, 10, undefined, pausing), index.searchInSlices(q3, 10, undefined, budget())]);
      expect(both).toEqual([index.search(q2, 10), index.search(q3, 10)]);
      expect(used).toHaveBeenCalled();
    });
  });

  it('after two searches overlapped, takes lone ones too for a while (the process is under load)', async () => {
    let clock = 1_000;
    await withThread(new ScanThread(modules!, () => clock), async (thread) => {
      const used = vi.spyOn(thread, 'scan');
      const index = filled(clustered(3_000, 30, 0.03, 52), false, thread);
      const [q1, q2, q3, q4] = clustered(4, 30, 0.03, 53);
      const pausing = new WorkBudget(async () => { await new Promise((r) => setImmediate(r)); }, 1);
      await Promise.all([index.searchInSlices(q1, 10, undefined, pausing), index.searchInSlices(q2, 10, undefined, budget())]);
      const overlapped = used.mock.calls.length;
      expect(overlapped).toBeGreaterThan(0);
      // 10 ms later a lone search still goes; 100 ms after that the process is quiet again.
      clock += 10;
      expect(await index.searchInSlices(q3, 10, undefined, budget())).toEqual(index.search(q3, 10));
      expect(used).toHaveBeenCalledTimes(overlapped + 1);
      clock += 100;
      expect(await index.searchInSlices(q4, 10, undefined, budget())).toEqual(index.search(q4, 10));
      expect(used).toHaveBeenCalledTimes(overlapped + 1);
    });
  });

  it('gives the hits, scores and order of a search on the main thread', async () => {
    await withThread(new CountingThread(modules!), async (thread) => {
      // 5,000 rows: more than one lane of the thread (4,096 rows per kernel call), and a tail past the last whole block.
      const index = filled(clustered(5_003, 40, 0.03, 40), false, thread);
      const queries = clustered(12, 40, 0.03, 41);
      for (const [i, q] of queries.entries()) {
        const k = i % 2 === 0 ? 10 : 30;
        expect(await index.searchInSlices(q, k, undefined, budget())).toEqual(index.search(q, k));
      }
      expect(thread.answers).toBe(queries.length);
    });
  });

  it('a filtered search stays on the main thread', async () => {
    await withThread(new CountingThread(modules!), async (thread) => {
      const index = filled(clustered(3_000, 30, 0.03, 42), false, thread);
      const q = clustered(1, 30, 0.03, 43)[0];
      const even = (item: { n: number }) => item.n % 2 === 0;
      expect(await index.searchInSlices(q, 10, even, budget())).toEqual(index.search(q, 10, even));
      expect(thread.answers).toBe(0);
    });
  });

  it('an answer is not used when a row changed before it came: the search sees the change', async () => {
    await withThread(new CountingThread(modules!), async (thread) => {
      const index = filled(clustered(3_000, 30, 0.03, 44), false, thread);
      const q = clustered(1, 30, 0.03, 45)[0];
      const pending = index.searchInSlices(q, 10, undefined, budget()); // the request is out, for rows [0, 3000)
      index.set('z-new', { n: -1 }, Float32Array.from(q)); // row 3000: the thread does not scan it
      const hits = await pending;
      expect(thread.answers).toBe(1); // it answered; the index did not take it
      expect(hits[0].id).toBe('z-new');
      expect(hits).toEqual(index.search(q, 10));
    });
  });

  it('a thread that ends with requests pending: they are searched on the main thread, later ones start a new thread', async () => {
    await withThread(new CountingThread(modules!), async (thread) => {
      const index = filled(clustered(3_000, 30, 0.03, 46), false, thread);
      const [q1, q2] = clustered(2, 30, 0.03, 47);
      const pending = index.searchInSlices(q1, 10, undefined, budget());
      expect(thread.inFlight).toBe(1);
      await thread.stop();
      expect(await pending).toEqual(index.search(q1, 10));
      expect(thread.answers).toBe(0);
      expect(await index.searchInSlices(q2, 10, undefined, budget())).toEqual(index.search(q2, 10));
      expect(thread.answers).toBe(1);
    });
  });

  it('an answer with more rows than a slot holds, or a query longer than it holds: the search runs on the main thread', async () => {
    const index = filled(clustered(3_000, 30, 0.03, 54));
    const q = clustered(1, 30, 0.03, 55)[0];
    // 384 dimensions: a query of 384 bytes for the relaxed kernel, 768 as i16; at least 64 rows reach the floor.
    const queryLength = relaxedInt8Works() ? DIM : 2 * DIM;
    for (const limits of [{ queryBytes: 8192, rows: 16 }, { queryBytes: queryLength - 1, rows: 4096 }]) {
      await withThread(new CountingThread(modules!, undefined, limits), async (thread) => {
        const threaded = filled(clustered(3_000, 30, 0.03, 54), false, thread);
        expect(await threaded.searchInSlices(q, 10, undefined, budget())).toEqual(index.search(q, 10));
        expect(thread.answers).toBe(0);
      });
    }
    await withThread(new CountingThread(modules!, undefined, { queryBytes: queryLength, rows: 4096 }), async (thread) => {
      const threaded = filled(clustered(3_000, 30, 0.03, 54), false, thread);
      expect(await threaded.searchInSlices(q, 10, undefined, budget())).toEqual(index.search(q, 10));
      expect(thread.answers).toBe(1);
    });
  });

  it('more searches at once than it has slots: the rest run on the main thread, and the slots serve again', async () => {
    await withThread(new CountingThread(modules!), async (thread) => {
      const index = filled(clustered(3_000, 30, 0.03, 56), false, thread);
      const queries = clustered(MAX_SCAN_SLOTS + 16, 30, 0.03, 57);
      const hits = await Promise.all(queries.map((q) => index.searchInSlices(q, 10, undefined, budget())));
      expect(hits).toEqual(queries.map((q) => index.search(q, 10)));
      expect(thread.answers).toBe(MAX_SCAN_SLOTS);
      expect(await Promise.all(queries.slice(0, MAX_SCAN_SLOTS).map((q) => index.searchInSlices(q, 10, undefined, budget())))).toEqual(hits.slice(0, MAX_SCAN_SLOTS));
      expect(thread.answers).toBe(2 * MAX_SCAN_SLOTS);
    });
  });

  it('a thread that cannot run a scan answers null and the search still answers', async () => {
    // Kernels that do not fit the memory: instantiating them in the thread throws.
    await withThread(new CountingThread({ dots: modules!.maxima, maxima: {} }), async (broken) => {
      const index = filled(clustered(3_000, 30, 0.03, 48), false, broken);
      const q = clustered(1, 30, 0.03, 49)[0];
      expect(await index.searchInSlices(q, 10, undefined, budget())).toEqual(index.search(q, 10));
      expect(broken.answers).toBe(0);
    });
  });
});
