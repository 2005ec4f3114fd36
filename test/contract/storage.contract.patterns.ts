/** Storage contract, part 1: the pattern repository. */
import { beforeEach, describe, expect, it } from 'vitest';
import { browseFilter } from '../../src/core/permissions.js';
import type { Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import {
  angled, at, collect, DIM, hitIds, ids, makePattern, pid, SCOPE_A, SCOPE_B, SCOPE_C, vec,
} from './storage.contract.fixtures.js';

export function patternContract(current: () => Storage): void {
  let storage: Storage;
  beforeEach(() => {
    storage = current();
  });

  describe('patterns: insert, get, update, delete, count', () => {
    it('round-trips every field, including nulls, unicode and multi-line text', async () => {
      const p = makePattern(1, {
        task: 'Résumé parser — ünïcødé ✓ "quoted" \\ back',
        code: 'def f():\n\treturn "x"\n'.repeat(50),
        output: 'line1\nline2',
        eval_score: 8.25,
        success_score: 8.25,
        run_id: 'run-1',
        classification: 'confidential',
        source: 'cli',
        author: 'agent-7',
        expires_at: at(99999),
        redacted: true,
        last_aged_at: at(50),
      });
      await storage.patterns.insert(SCOPE_A, p, vec(1));
      expect(await storage.patterns.get(SCOPE_A, p.id)).toEqual(p);
      expect(await storage.patterns.count(SCOPE_A)).toBe(1);
    });

    it('returns null for an unknown id and 0 for an empty scope', async () => {
      expect(await storage.patterns.get(SCOPE_A, pid(404))).toBeNull();
      expect(await storage.patterns.count(SCOPE_A)).toBe(0);
    });

    it('keeps its own copy: mutating inputs or results does not change what is stored', async () => {
      const p = makePattern(1);
      await storage.patterns.insert(SCOPE_A, p, vec(1));
      p.task = 'changed after insert';
      const got = (await storage.patterns.get(SCOPE_A, pid(1)))!;
      got.code = 'changed after get';
      const again = (await storage.patterns.get(SCOPE_A, pid(1)))!;
      expect(again.task).toBe('task number 1');
      expect(again.code).toBe('print(1)');
    });

    it('rejects a second insert of the same id', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      await expect(storage.patterns.insert(SCOPE_A, makePattern(1, { task: 'dup' }), vec(0, 1))).rejects.toThrow();
      expect((await storage.patterns.get(SCOPE_A, pid(1)))!.task).toBe('task number 1');
      expect(await storage.patterns.count(SCOPE_A)).toBe(1);
    });

    it('sampleVectors: the ids at the ranks where floor(r · n / total) steps up, zero vectors skipped', async () => {
      const zero = new Set([10, 23]);
      // Stored out of id order in one scope, in order in the other: the rule is by id either way.
      for (let i = 0; i < 30; i++) {
        const n = ((i * 7) % 30) + 1;
        await storage.patterns.insert(SCOPE_A, makePattern(n), zero.has(n) ? new Float32Array(DIM) : vec(1, n));
      }
      for (let n = 1; n <= 30; n++) await storage.patterns.insert(SCOPE_B, makePattern(n), zero.has(n) ? new Float32Array(DIM) : vec(1, n));
      const picked = (want: number) => Array.from({ length: 30 }, (_, r) => r)
        .filter((r) => r === 0 || Math.floor((r * want) / 30) !== Math.floor(((r - 1) * want) / 30))
        .map((r) => pid(r + 1))
        .filter((id) => !zero.has(Number(id.slice(1))));
      const sample = await storage.patterns.sampleVectors(SCOPE_A, 7);
      // Ranks 0, 5, 9, 13, 18, 22, 26: pid(10) and pid(23) hold zero vectors.
      expect(sample.map((s) => s.id)).toEqual([pid(1), pid(6), pid(14), pid(19), pid(27)]);
      expect(sample.map((s) => s.id)).toEqual(picked(7));
      for (const { id, vector } of sample) {
        const n = Number(id.slice(1));
        const want = vec(1, n);
        for (let i = 0; i < DIM; i++) expect(vector[i]).toBeCloseTo(want[i], 6);
      }
      expect((await storage.patterns.sampleVectors(SCOPE_B, 7)).map((s) => s.id)).toEqual(picked(7));
      expect((await storage.patterns.sampleVectors(SCOPE_A, 50)).map((s) => s.id)).toEqual(picked(50));
      expect(await storage.patterns.sampleVectors(SCOPE_A, 0)).toEqual([]);
      expect(await storage.patterns.sampleVectors(SCOPE_C, 5)).toEqual([]);
    });

    it('getMany returns the present ones and skips missing ids', async () => {
      for (const n of [1, 2, 3]) await storage.patterns.insert(SCOPE_A, makePattern(n), vec(1, n));
      const got = await storage.patterns.getMany(SCOPE_A, [pid(3), pid(404), pid(1)]);
      expect(ids(got).sort()).toEqual([pid(1), pid(3)]);
      expect(await storage.patterns.getMany(SCOPE_A, [])).toEqual([]);
    });

    it('update replaces the record, keeps the vector unless given, and is false when absent', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(2), vec(0, 1));
      const changed = makePattern(1, { code: 'better()', eval_score: 9, success_score: 9, updated_at: at(500) });
      expect(await storage.patterns.update(SCOPE_A, changed)).toBe(true);
      expect(await storage.patterns.get(SCOPE_A, pid(1))).toEqual(changed);
      // without a vector the old one stays: e0 still finds pattern 1 first
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 1))).toEqual([pid(1)]);
      // with a vector: pattern 1 moves to e2
      expect(await storage.patterns.update(SCOPE_A, changed, vec(0, 0, 1))).toBe(true);
      const [hit] = await storage.patterns.search(SCOPE_A, vec(0, 0, 1), 1);
      expect(hit.pattern.id).toBe(pid(1));
      expect(hit.similarity).toBeCloseTo(1, 5);
      expect(await storage.patterns.update(SCOPE_A, makePattern(404))).toBe(false);
      expect(await storage.patterns.get(SCOPE_A, pid(404))).toBeNull();
      expect(await storage.patterns.count(SCOPE_A)).toBe(2);
    });

    it('delete is a hard delete that cascades to vector, eval observations and skill tags', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(2), vec(1, 1));
      await storage.evals.add(SCOPE_A, pid(1), 7, at(10));
      await storage.evals.add(SCOPE_A, pid(2), 6, at(10));
      await storage.skills.set(SCOPE_A, pid(1), ['python', 'parsing']);

      expect(await storage.patterns.delete(SCOPE_A, pid(1))).toBe(true);
      expect(await storage.patterns.delete(SCOPE_A, pid(1))).toBe(false);
      expect(await storage.patterns.get(SCOPE_A, pid(1))).toBeNull();
      expect(await storage.patterns.count(SCOPE_A)).toBe(1);
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 10))).toEqual([pid(2)]);
      const recent = await storage.evals.recent(SCOPE_A, [pid(1), pid(2)], 5);
      expect(recent.has(pid(1))).toBe(false);
      expect(recent.get(pid(2))).toEqual([6]);
      expect(await storage.skills.get(SCOPE_A, pid(1))).toEqual([]);
      expect((await storage.skills.search(SCOPE_A, ['python'], false)).size).toBe(0);
      expect(ids(await collect(storage.patterns.iterate(SCOPE_A)))).toEqual([pid(2)]);
    });

    it('an id deleted and inserted again starts clean', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      await storage.evals.add(SCOPE_A, pid(1), 3, at(10));
      await storage.patterns.delete(SCOPE_A, pid(1));
      await storage.patterns.insert(SCOPE_A, makePattern(1, { task: 'reborn' }), vec(0, 1));
      expect((await storage.patterns.get(SCOPE_A, pid(1)))!.task).toBe('reborn');
      expect((await storage.evals.recent(SCOPE_A, [pid(1)], 5)).has(pid(1))).toBe(false);
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(0, 1), 5))).toEqual([pid(1)]);
    });
  });

  describe('patterns: search', () => {
    beforeEach(async () => {
      // cos with e0: 0° → 1, 20° → .940, 40° → .766, 60° → .5, 80° → .174
      for (const [n, deg] of [[1, 40], [2, 0], [3, 80], [4, 20], [5, 60]] as const) {
        await storage.patterns.insert(SCOPE_A, makePattern(n), angled(deg));
      }
    });

    it('orders by cosine similarity, best first, with the true cosine values, at most k', async () => {
      const hits = await storage.patterns.search(SCOPE_A, vec(1), 10);
      expect(hitIds(hits)).toEqual([pid(2), pid(4), pid(1), pid(5), pid(3)]);
      const expected = [0, 20, 40, 60, 80].map((d) => Math.cos((d * Math.PI) / 180));
      hits.forEach((h, i) => expect(h.similarity).toBeCloseTo(expected[i], 4));
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 2))).toEqual([pid(2), pid(4)]);
      expect(hits[0].pattern).toEqual(makePattern(2));
    });

    it('is a cosine: the magnitude of query or stored vectors does not matter', async () => {
      const scaled = angled(20).map((x) => x * 7.5);
      await storage.patterns.insert(SCOPE_A, makePattern(9), vec(0, 0, 0, 3));
      const hits = await storage.patterns.search(SCOPE_A, scaled, 1);
      expect(hits[0].pattern.id).toBe(pid(4));
      expect(hits[0].similarity).toBeCloseTo(1, 4);
      await storage.patterns.insert(SCOPE_A, makePattern(10), new Float32Array([0, 0, 0, 0, 0, 40, 0, 0]));
      const [h] = await storage.patterns.search(SCOPE_A, vec(0, 0, 0, 0, 0, 1), 1);
      expect(h.pattern.id).toBe(pid(10));
      expect(h.similarity).toBeCloseTo(1, 4);
    });

    it('clamps similarity to [0, 1]: opposite and orthogonal vectors score 0', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(6), vec(-1));
      await storage.patterns.insert(SCOPE_A, makePattern(7), vec(0, 0, 1));
      const hits = await storage.patterns.search(SCOPE_A, vec(1), 10);
      expect(hits).toHaveLength(7);
      for (const h of hits) {
        expect(h.similarity).toBeGreaterThanOrEqual(0);
        expect(h.similarity).toBeLessThanOrEqual(1);
      }
      const opposite = hits.find((h) => h.pattern.id === pid(6))!;
      expect(opposite.similarity).toBe(0);
      expect(hits.find((h) => h.pattern.id === pid(7))!.similarity).toBeCloseTo(0, 6);
      expect(hits[0].similarity).toBeCloseTo(1, 5);
    });

    it('returns nothing for k = 0 or an empty scope', async () => {
      expect(await storage.patterns.search(SCOPE_A, vec(1), 0)).toEqual([]);
      expect(await storage.patterns.search(SCOPE_B, vec(1), 5)).toEqual([]);
    });

    it('applies the classification filter inside the search (k=1 still finds the best match)', async () => {
      await storage.patterns.update(SCOPE_A, makePattern(5, { classification: 'public' }));
      await storage.patterns.update(SCOPE_A, makePattern(3, { classification: 'public' }));
      const hits = await storage.patterns.search(SCOPE_A, vec(1), 1, { classification: 'public' });
      expect(hitIds(hits)).toEqual([pid(5)]);
      expect(hits[0].similarity).toBeCloseTo(0.5, 4);
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 10, { classification: 'public' }))).toEqual([pid(5), pid(3)]);
      expect(await storage.patterns.search(SCOPE_A, vec(1), 10, { classification: 'confidential' })).toEqual([]);
    });

    it('applies the source filter inside the search', async () => {
      await storage.patterns.update(SCOPE_A, makePattern(1, { source: 'import' }));
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 1, { source: 'import' }))).toEqual([pid(1)]);
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 1, { source: 'api' }))).toEqual([pid(2)]);
    });

    it('applies min_score on success_score (inclusive) inside the search', async () => {
      await storage.patterns.update(SCOPE_A, makePattern(3, { success_score: 9.5, eval_score: 2 }));
      await storage.patterns.update(SCOPE_A, makePattern(5, { success_score: 9, eval_score: 2 }));
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 1, { min_score: 9 }))).toEqual([pid(5)]);
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 5, { min_score: 9.2 }))).toEqual([pid(3)]);
      expect(await storage.patterns.search(SCOPE_A, vec(1), 5, { min_score: 9.6 })).toEqual([]);
    });

    it('combines filters', async () => {
      await storage.patterns.update(SCOPE_A, makePattern(4, { classification: 'public', source: 'sdk', success_score: 3 }));
      await storage.patterns.update(SCOPE_A, makePattern(1, { classification: 'public', source: 'sdk', success_score: 8 }));
      await storage.patterns.update(SCOPE_A, makePattern(5, { classification: 'public', source: 'cli', success_score: 9 }));
      const filter = { classification: 'public', source: 'sdk', min_score: 5 } as const;
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 3, filter))).toEqual([pid(1)]);
    });

    it('sees success_score changes made by recordReuse when filtering', async () => {
      await storage.patterns.update(SCOPE_A, makePattern(3, { success_score: 8.95 }));
      expect(await storage.patterns.search(SCOPE_A, vec(1), 1, { min_score: 9 })).toEqual([]);
      await storage.patterns.recordReuse(SCOPE_A, [pid(3)], 0.1, at(1000));
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 1, { min_score: 9 }))).toEqual([pid(3)]);
    });

    it('setVector replaces the vector used by search', async () => {
      await storage.patterns.setVector(SCOPE_A, pid(3), vec(1));
      const hits = await storage.patterns.search(SCOPE_A, vec(1), 2);
      expect(hits.map((h) => h.similarity)).toEqual([expect.closeTo(1, 4), expect.closeTo(1, 4)]);
      expect(hitIds(hits).sort()).toEqual([pid(2), pid(3)]);
      const [far] = await storage.patterns.search(SCOPE_A, angled(80), 1);
      expect(far.pattern.id).not.toBe(pid(3));
      expect((await storage.patterns.get(SCOPE_A, pid(3)))!.task).toBe('task number 3');
    });

    it('search with an eval window: the same hits, in the same order, with whole records', async () => {
      const filter = { min_score: 0 } as const;
      const plain = await storage.patterns.search(SCOPE_A, angled(30), 4, filter);
      const windowed = await storage.patterns.search(SCOPE_A, angled(30), 4, filter, 5);
      expect(hitIds(plain)).toHaveLength(4);
      expect(windowed).toEqual(plain.map((h) => ({ ...h, similarity: expect.closeTo(h.similarity, 6) })));
      expect(Object.keys(windowed[0]).sort()).toEqual(['pattern', 'recent_evals', 'similarity']);
      for (const h of windowed) {
        expect(h.recent_evals).toEqual([]);
        expect(h.pattern).toEqual(await storage.patterns.get(SCOPE_A, h.pattern.id));
      }
      expect(await storage.patterns.search(SCOPE_A, vec(1), 0, undefined, 5)).toEqual([]);
      expect(await storage.patterns.search(SCOPE_C, vec(1), 5, undefined, 5)).toEqual([]);
    });

    it('search with an eval window: applies the filters inside the search, like without', async () => {
      await storage.patterns.update(SCOPE_A, makePattern(5, { classification: 'public' }));
      await storage.patterns.update(SCOPE_A, makePattern(3, { classification: 'public', success_score: 9 }));
      const found = await storage.patterns.search(SCOPE_A, vec(1), 1, { classification: 'public' }, 2);
      expect(hitIds(found)).toEqual([pid(5)]);
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 5, { classification: 'public', min_score: 8.5 }, 2))).toEqual([pid(3)]);
    });

    it("search carries each hit's newest eval observations of its own scope, newest first, at most the window", async () => {
      for (const [score, t] of [[4, 10], [6, 30], [8, 20]] as const) await storage.evals.add(SCOPE_A, pid(2), score, at(t));
      await storage.evals.add(SCOPE_A, pid(4), 9, at(5));
      // The same id in another scope has observations of its own; they must not leak.
      await storage.patterns.insert(SCOPE_B, makePattern(2), vec(1));
      await storage.evals.add(SCOPE_B, pid(2), 1, at(99));

      const found = await storage.patterns.search(SCOPE_A, vec(1), 3, undefined, 2);
      expect(found.map((h) => [h.pattern.id, h.recent_evals])).toEqual([[pid(2), [6, 8]], [pid(4), [9]], [pid(1), []]]);
      const wide = await storage.patterns.search(SCOPE_A, vec(1), 1, undefined, 5);
      expect(wide[0].recent_evals).toEqual([6, 8, 4]);
      const none = await storage.patterns.search(SCOPE_A, vec(1), 1, undefined, 0);
      expect(none[0].recent_evals).toEqual([]);
      expect((await storage.patterns.search(SCOPE_A, vec(1), 1))[0].recent_evals).toEqual([]);
    });

    it('vectors: the stored direction of each present pattern of the scope, missing ids skipped', async () => {
      await storage.patterns.insert(SCOPE_B, makePattern(2), vec(0, 1));
      const cos = (a: Float32Array, b: Float32Array) => {
        let dot = 0, na = 0, nb = 0;
        for (let i = 0; i < a.length; i++) {
          dot += a[i] * b[i];
          na += a[i] * a[i];
          nb += b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
      };
      const got = await storage.patterns.vectors!(SCOPE_A, [pid(2), pid(4), pid(404), pid(2)]);
      expect([...got.keys()].sort()).toEqual([pid(2), pid(4)]);
      expect(cos(got.get(pid(2))!, vec(1))).toBeCloseTo(1, 6);
      expect(cos(got.get(pid(4))!, angled(20))).toBeCloseTo(1, 6);
      expect(cos((await storage.patterns.vectors!(SCOPE_B, [pid(2)])).get(pid(2))!, vec(0, 1))).toBeCloseTo(1, 6);
      expect((await storage.patterns.vectors!(SCOPE_C, [pid(2)])).size).toBe(0);
    });

    it('finds the best of many', async () => {
      for (let n = 100; n < 400; n++) {
        const deg = 5 + ((n * 37) % 170);
        await storage.patterns.insert(SCOPE_B, makePattern(n), angled(deg));
      }
      await storage.patterns.insert(SCOPE_B, makePattern(999), angled(1));
      const hits = await storage.patterns.search(SCOPE_B, vec(1), 3);
      expect(hits[0].pattern.id).toBe(pid(999));
      expect(hits[0].similarity).toBeGreaterThanOrEqual(hits[1].similarity);
      expect(hits[1].similarity).toBeGreaterThanOrEqual(hits[2].similarity);
    });
  });

  describe('patterns: list (keyset pages, newest update first)', () => {
    const all = async (scope: Scope, limit: number, filter?: Parameters<Storage['patterns']['list']>[1]['filter']) => {
      const pages: string[][] = [];
      let after: { updated_at: string; id: string } | null = null;
      for (;;) {
        const page = await storage.patterns.list(scope, { limit, after, filter });
        if (page.length === 0) return pages;
        pages.push(ids(page));
        const last = page[page.length - 1];
        after = { updated_at: last.updated_at, id: last.id };
      }
    };

    it('orders by updated_at descending, ties by id descending, and resumes strictly after the cursor', async () => {
      // 1..5 updated at 10..50 s; 6 and 7 share 30 s with 3 (ties broken by id).
      for (const n of [1, 2, 3, 4, 5]) await storage.patterns.insert(SCOPE_A, makePattern(n, { updated_at: at(n * 10) }), vec(1, n));
      for (const n of [6, 7]) await storage.patterns.insert(SCOPE_A, makePattern(n, { updated_at: at(30) }), vec(1, n));
      await storage.patterns.insert(SCOPE_B, makePattern(8, { updated_at: at(99) }), vec(1));
      const order = [pid(5), pid(4), pid(7), pid(6), pid(3), pid(2), pid(1)];
      expect(ids(await storage.patterns.list(SCOPE_A, { limit: 100, after: null }))).toEqual(order);
      expect(await all(SCOPE_A, 2)).toEqual([order.slice(0, 2), order.slice(2, 4), order.slice(4, 6), order.slice(6)]);
      // A cursor inside a tie resumes with the rest of the tie.
      expect(ids(await storage.patterns.list(SCOPE_A, { limit: 2, after: { updated_at: at(30), id: pid(7) } }))).toEqual([pid(6), pid(3)]);
      // A pattern updated after the listing started moves to the front; the pages after the cursor are unaffected.
      await storage.patterns.recordReuse(SCOPE_A, [pid(1)], 0.5, at(1000));
      expect(ids(await storage.patterns.list(SCOPE_A, { limit: 10, after: { updated_at: at(30), id: pid(3) } }))).toEqual([pid(2)]);
      expect(await storage.patterns.list(SCOPE_C, { limit: 5, after: null })).toEqual([]);
    });

    it('pages exactly over stored times with 0-9 fractional digits and many equal ones (limits 1, 7, 100)', async () => {
      // Times as a store may already hold them (kept before input times were normalised):
      // 120 patterns over 4 seconds, many within one millisecond or exactly equal.
      const T = (n: number) => {
        const digits = n % 10;
        const fraction = `4${String(n % 3).repeat(8)}`.slice(0, digits);
        return `2025-02-01T00:00:0${Math.floor(n / 30)}${digits ? `.${fraction}` : ''}Z`;
      };
      for (let n = 0; n < 120; n++) await storage.patterns.insert(SCOPE_A, makePattern(n, { updated_at: T(n) }), vec(1, n));
      const full = ids(await storage.patterns.list(SCOPE_A, { limit: 1000, after: null }));
      expect(new Set(full).size).toBe(120);
      for (const limit of [1, 7, 100]) expect((await all(SCOPE_A, limit)).flat(), `limit ${limit}`).toEqual(full);
    });

    it('applies the filter inside the listing: classification, source, score and update-time bounds', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1, { success_score: 2, classification: 'public', updated_at: at(10) }), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(2, { success_score: 6, source: 'cli', updated_at: at(20) }), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(3, { success_score: 9, updated_at: at(30) }), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(4, { success_score: 6, updated_at: at(40) }), vec(1));
      const list = async (filter: Parameters<Storage['patterns']['list']>[1]['filter']) => (await all(SCOPE_A, 1, filter)).flat();
      expect(await list({ classification: 'public' })).toEqual([pid(1)]);
      expect(await list({ source: 'cli' })).toEqual([pid(2)]);
      expect(await list({ min_score: 6, max_score: 6 })).toEqual([pid(4), pid(2)]);
      expect(await list({ updated_after: at(10), updated_before: at(40) })).toEqual([pid(3), pid(2)]);
      expect(await list({ max_score: 1 })).toEqual([]);
    });

    it("applies a role's browse filter inside the listing and the export's iteration: no confidential pattern for a reader", async () => {
      const classes = ['public', 'internal', 'confidential'] as const;
      for (let n = 1; n <= 9; n++) {
        await storage.patterns.insert(SCOPE_A, makePattern(n, { classification: classes[n % 3], success_score: n, updated_at: at(n * 10) }), vec(1, n));
      }
      const list = async (filter: Parameters<Storage['patterns']['list']>[1]['filter']) => (await all(SCOPE_A, 2, filter)).flat();
      const iterate = async (filter: Parameters<Storage['patterns']['iterate']>[1]) => ids(await collect(storage.patterns.iterate(SCOPE_A, filter)));
      const visible = [9, 7, 6, 4, 3, 1].map(pid); // n % 3 !== 2: public and internal, newest first
      expect(await list(browseFilter('reader'))).toEqual(visible);
      expect(await iterate(browseFilter('reader'))).toEqual([...visible].reverse());
      // The caller's own filters still apply, and asking for what the role may not see finds nothing.
      expect(await list(browseFilter('reader', { min_score: 4, classification: 'internal' }))).toEqual([pid(7), pid(4)]);
      expect(await list(browseFilter('reader', { classification: 'confidential' }))).toEqual([]);
      expect(await iterate(browseFilter('reader', { classifications: ['confidential'] }))).toEqual([]);
      // An editor browses everything.
      expect(await list(browseFilter('editor'))).toHaveLength(9);
      expect(await iterate(browseFilter('editor', { classification: 'confidential' }))).toEqual([pid(2), pid(5), pid(8)]);
    });
  });

  describe('patterns: iterate, recordReuse, listScopes', () => {
    it('iterates every pattern ordered by id, across pages, with filters', async () => {
      const order = Array.from({ length: 260 }, (_, i) => (i * 97) % 260); // shuffled insert order
      for (const n of order) {
        await storage.patterns.insert(
          SCOPE_A,
          makePattern(n, { classification: n % 3 === 0 ? 'public' : 'internal', success_score: n % 10, source: n % 2 ? 'sdk' : 'api' }),
          angled(n % 90),
        );
      }
      const all = await collect(storage.patterns.iterate(SCOPE_A));
      expect(ids(all)).toEqual(Array.from({ length: 260 }, (_, i) => pid(i)));
      const pub = await collect(storage.patterns.iterate(SCOPE_A, { classification: 'public' }));
      expect(ids(pub)).toEqual(Array.from({ length: 260 }, (_, i) => i).filter((n) => n % 3 === 0).map(pid));
      const high = await collect(storage.patterns.iterate(SCOPE_A, { min_score: 8, source: 'sdk' }));
      expect(ids(high)).toEqual(Array.from({ length: 260 }, (_, i) => i).filter((n) => n % 10 >= 8 && n % 2 === 1).map(pid));
      expect(await collect(storage.patterns.iterate(SCOPE_B))).toEqual([]);
    });

    it('recordReuse adds 1 to reuse_count and delta to success_score, capped at 10', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1, { success_score: 5 }), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(2, { success_score: 9.95, reuse_count: 4 }), vec(0, 1));
      await storage.patterns.insert(SCOPE_A, makePattern(3), vec(0, 0, 1));
      await storage.patterns.recordReuse(SCOPE_A, [pid(1), pid(2), pid(404)], 0.1, at(777));
      const p1 = (await storage.patterns.get(SCOPE_A, pid(1)))!;
      const p2 = (await storage.patterns.get(SCOPE_A, pid(2)))!;
      expect(p1.reuse_count).toBe(1);
      expect(p1.success_score).toBeCloseTo(5.1, 10);
      expect(p1.updated_at).toBe(at(777));
      expect(p2.reuse_count).toBe(5);
      expect(p2.success_score).toBe(10);
      await storage.patterns.recordReuse(SCOPE_A, [pid(2)], 0.1, at(778));
      expect((await storage.patterns.get(SCOPE_A, pid(2)))!.success_score).toBe(10);
      expect(await storage.patterns.get(SCOPE_A, pid(3))).toEqual(makePattern(3));
      await storage.patterns.recordReuse(SCOPE_A, [], 0.1, at(779));
    });

    it('listScopes names exactly the scopes holding patterns', async () => {
      expect(await storage.patterns.listScopes()).toEqual([]);
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      await storage.patterns.insert(SCOPE_C, makePattern(2), vec(1));
      await storage.metrics.recordRun(SCOPE_B, 5); // data, but no patterns
      const key = (s: Scope) => `${s.tenant_id}/${s.project_id}`;
      expect((await storage.patterns.listScopes()).map(key).sort()).toEqual([key(SCOPE_A), key(SCOPE_C)].sort());
      await storage.patterns.delete(SCOPE_C, pid(2));
      expect((await storage.patterns.listScopes()).map(key)).toEqual([key(SCOPE_A)]);
    });
  });
}
