/** Storage contract, part 6: hybrid recall's candidates and project figures (issue 27). */
import { beforeEach, describe, expect, it } from 'vitest';
import { bm25OfText, distinctTerms, MAX_KEYWORD_TERM_BYTES, selectiveTerms, termsOf } from '../../src/core/bm25.js';
import { dot, unitVector, type HybridCandidateSet } from '../../src/core/hybrid.js';
import type { Storage } from '../../src/ports/storage.js';
import { rankCandidates } from '../../src/core/ranking.js';
import { WorkBudget } from '../../src/core/slices.js';
import { rankInSlices } from '../../src/services/recall-dedup.js';
import { blendInSlices, blendOrder, rescore } from '../../src/services/recall-hybrid.js';
import { codeTermText, codeTermsOf } from '../../src/core/code-terms.js';
import { principalComponents } from '../../src/core/components.js';
import { at, DIM, incompressibleWord, makePattern, pid, SCOPE_A, SCOPE_B } from './storage.contract.fixtures.js';

const WORDS = ['parse', 'csv', 'file', 'sum', 'column', 'resize', 'image', 'folder', 'retry', 'http', 'request', 'backoff'];

/** A fixed corpus of 24 patterns: tasks of 3–6 words from WORDS, vectors from a tiny LCG. */
function corpus(): { task: string; vector: Float32Array }[] {
  let seed = 7;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  return Array.from({ length: 24 }, (_, i) => {
    const length = 3 + (i % 4);
    const words = Array.from({ length }, () => WORDS[Math.floor(next() * WORDS.length)]);
    const vector = new Float32Array(DIM).map(() => next() - 0.3);
    return { task: `${words.join(' ')} ${i}`, vector: unitVector(vector) };
  });
}

const RANKING = { evalWeighted: false, deduplicate: false, keep: 100 };
/** The first six of the fixed corpus's ranking with the project's two principal directions removed (both storages). */
const EXPECTED_WITH_REMOVAL = ['p00000004', 'p00000024', 'p00000023', 'p00000014', 'p00000002', 'p00000017'];

export function hybridContract(current: () => Storage): void {
  let storage: Storage;
  const items = corpus();
  const query = { task: 'parse a csv file and sum a column', vector: unitVector(new Float32Array([0.5, 0.1, -0.2, 0.3, 0.2, 0.1, 0, 0.4])) };
  const terms = distinctTerms(query.task);
  describe('hybrid candidates', () => {
    // Inside the describe: the corpus is for these tests only, not the rest of the contract.
    beforeEach(async () => {
      storage = current();
      for (const [i, item] of items.entries()) await storage.patterns.insert(SCOPE_A, makePattern(i + 1, { task: item.task }), item.vector);
      await storage.patterns.insert(SCOPE_B, makePattern(100, { task: 'parse csv csv csv' }), items[0].vector);
    });

    it('a word longer than MAX_KEYWORD_TERM_BYTES is no keyword: the pattern stores and its other words find it', async () => {
      const scope = { tenant_id: SCOPE_A.tenant_id, project_id: 'long-words' };
      const blob = incompressibleWord(3000);
      const longest = 'k'.repeat(MAX_KEYWORD_TERM_BYTES);
      await storage.patterns.insert(scope, makePattern(300, { task: `decode the ${blob} payload ${longest}` }), items[0].vector);
      await storage.patterns.writeBatch!(scope, [{ record: makePattern(301, { task: `${blob}x again` }), vector: items[1].vector, replace: false }], null);
      expect((await storage.patterns.getMany(scope, [pid(300), pid(301)])).map((p) => p.task.length)).toEqual([3276, 3007]);

      const queryTerms = distinctTerms(`payload ${blob} ${longest}`);
      expect(queryTerms).toEqual(['payload', longest]);
      const set = await storage.patterns.hybridCandidates(scope, { vector: null, terms: queryTerms, vectorK: 0, keywordK: 10, evalWindow: 0 });
      // Keywords only: "decode the payload k…k" and "again".
      expect(set.stats).toMatchObject({ docs: 2, totalTerms: 5 });
      expect(Object.fromEntries(set.stats.df)).toEqual({ payload: 1, [longest]: 1 });
      expect(set.candidates.map((c) => c.id)).toEqual([pid(300)]);
      // The long word itself finds nothing on any storage (it is in no posting).
      const byBlob = await storage.patterns.hybridCandidates(scope, { vector: null, terms: [blob], vectorK: 0, keywordK: 10, evalWindow: 0 });
      expect(byBlob.candidates).toEqual([]);
    });

    it('keeps the project figures BM25 and centring need, scoped to the project', async () => {
      const set = await storage.patterns.hybridCandidates(SCOPE_A, { vector: query.vector, terms, vectorK: 50, keywordK: 50, evalWindow: 0 });
      const all = items.map((i) => termsOf(i.task));
      expect(set.stats.docs).toBe(24);
      expect(set.stats.totalTerms).toBe(all.reduce((n, t) => n + t.length, 0));
      for (const term of terms) expect(set.stats.df.get(term)).toBe(all.filter((t) => t.includes(term)).length);
      const mean = new Float64Array(DIM);
      for (const i of items) i.vector.forEach((x, d) => (mean[d] += x / items.length));
      expect(set.stats.vectors).toBe(24);
      expect(set.stats.query_mean_dot).toBeCloseTo(dot(query.vector, mean), 5);
      expect(set.stats.mean_norm2).toBeCloseTo(dot(mean, mean), 5);
      // k above the project size: every pattern, with its exact cosine and mean dot.
      expect(set.candidates).toHaveLength(24);
      for (const c of set.candidates) {
        const item = items[Number(c.id.slice(1)) - 1];
        expect(c.cosine).toBeCloseTo(dot(query.vector, item.vector), 5);
        expect(c.mean_dot!).toBeCloseTo(dot(item.vector, mean), 5);
      }
    });

    it('takes every cosine from the full-precision query at an indexed dimension (384)', async () => {
      // PostgreSQL walks its HNSW index at half precision; the cosines it returns must still be
      // taken against the query as sent (they are the wire's similarity and the tiers' input).
      const wide = { tenant_id: SCOPE_A.tenant_id, project_id: 'wide-vectors' };
      let seed = 11;
      const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
      const vectors = Array.from({ length: 12 }, () => unitVector(Float32Array.from({ length: 384 }, () => next() - 0.5)));
      for (const [i, v] of vectors.entries()) await storage.patterns.insert(wide, makePattern(200 + i, { task: `wide ${i}` }), v);
      // Near the first stored vector, as a real query near its match is.
      const q = unitVector(Float32Array.from(vectors[0], (x, d) => x + 0.02 * Math.sin(d + 0.1) + 1e-3 / (d + 1)));
      const set = await storage.patterns.hybridCandidates(wide, { vector: q, terms: [], vectorK: 12, keywordK: 0, evalWindow: 0 });
      expect(set.candidates).toHaveLength(12);
      for (const c of set.candidates) {
        const exact = dot(q, vectors[Number(c.id.slice(1)) - 200]);
        expect(Math.abs(c.cosine - exact), c.id).toBeLessThan(2e-6);
      }
    });

    it('takes the k best by BM25 and the k nearest, and ranks the union in one order on every storage', async () => {
      const keywordOnly = await storage.patterns.hybridCandidates(SCOPE_A, { vector: null, terms, vectorK: 0, keywordK: 4, evalWindow: 0 });
      const stats = keywordOnly.stats;
      const byBm25 = items
        .map((i, n) => ({ id: makePattern(n + 1).id, score: bm25OfText(selectiveTerms(terms, stats), i.task, stats) }))
        .filter((x) => x.score > 0)
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
      expect(keywordOnly.candidates.map((c) => c.id).sort()).toEqual(byBm25.slice(0, 4).map((x) => x.id).sort());

      const union = await storage.patterns.hybridCandidates(SCOPE_A, { vector: query.vector, terms, vectorK: 3, keywordK: 3, evalWindow: 0 });
      const nearest = items
        .map((i, n) => ({ id: makePattern(n + 1).id, cos: dot(query.vector, i.vector) }))
        .sort((a, b) => b.cos - a.cos)
        .slice(0, 3)
        .map((x) => x.id);
      const expectedIds = new Set([...nearest, ...byBm25.slice(0, 3).map((x) => x.id)]);
      expect(new Set(union.candidates.map((c) => c.id))).toEqual(expectedIds);

      // The order a recall of this fixed corpus gives, identical on both storages.
      const ranked = rankCandidates(rescore(union, query.task, query.vector, terms, 0.7), RANKING).map((c) => c.id);
      expect(ranked).toEqual(expectedOrder(union, query.task, query.vector, terms));
      expect(ranked).toEqual(['p00000014', 'p00000015', 'p00000023', 'p00000024', 'p00000004', 'p00000002']);
      // Recall's own path, in slices of two candidates (a pause between each): the same order.
      const budget = new WorkBudget(() => new Promise((resolve) => setImmediate(resolve)), 2);
      const blended = await blendInSlices(union, query.task, query.vector, terms, 0.7, budget);
      expect((await rankInSlices(blended, RANKING, budget, blendOrder)).map((c) => c.id)).toEqual(ranked);
    });

    it("carries every candidate's newest eval scores of its own project, exactly, nearest and keyword-only alike", async () => {
      // Scores whose shortest decimal text has many digits: they must come back bit for bit.
      const awkward = [0.1 + 0.2, 22 / 3, 1e-7, 9.999999999999998, 5];
      const union = await storage.patterns.hybridCandidates(SCOPE_A, { vector: query.vector, terms, vectorK: 3, keywordK: 3, evalWindow: 0 });
      const ids = union.candidates.map((c) => c.id);
      // More than the 3 nearest: the keyword side's own rows are among them.
      expect(ids.length).toBeGreaterThan(3);
      for (const [n, id] of ids.entries()) {
        for (const [t, score] of awkward.slice(n % 3).entries()) await storage.evals.add(SCOPE_A, id, score, at(10 + t));
      }
      // The same id in another project has observations of its own; they must not show.
      await storage.evals.add(SCOPE_B, ids[0], 1, at(99));
      const windowed = await storage.patterns.hybridCandidates(SCOPE_A, { vector: query.vector, terms, vectorK: 3, keywordK: 3, evalWindow: 4 });
      expect(new Set(windowed.candidates.map((c) => c.id))).toEqual(new Set(ids));
      for (const c of windowed.candidates) {
        const observed = awkward.slice(ids.indexOf(c.id) % 3);
        expect(c.recent_evals, c.id).toEqual(observed.reverse().slice(0, 4));
      }
    });

    it('finds the k best by BM25 beside the k nearest for any k', async () => {
      const tasks = ['parse csv file', 'retry http request with backoff', 'resize image folder', 'sum column csv file parse', 'http request csv image column'];
      for (const [q, task] of tasks.entries()) {
        const qTerms = distinctTerms(task);
        const vector = unitVector(Float32Array.from({ length: DIM }, (_, d) => Math.sin(7 * q + d)));
        for (const k of [1, 2, 3, 5, 8]) {
          const set = await storage.patterns.hybridCandidates(SCOPE_A, { vector, terms: qTerms, vectorK: k, keywordK: k, evalWindow: 0 });
          const got = new Set(set.candidates.map((c) => c.id));
          const nearest = items
            .map((i, n) => ({ id: makePattern(n + 1).id, cos: dot(vector, i.vector) }))
            .sort((a, b) => b.cos - a.cos)
            .slice(0, k)
            .map((x) => x.id);
          const scored = items
            .map((i, n) => ({ id: makePattern(n + 1).id, score: bm25OfText(selectiveTerms(qTerms, set.stats), i.task, set.stats) }))
            .filter((x) => x.score > 0)
            .sort((a, b) => b.score - a.score);
          // Ties at the k-th score may be broken either way (float sums differ in the last bit).
          const kth = scored.length >= k ? scored[k - 1].score : 0;
          for (const id of nearest) expect(got.has(id), `${task} k=${k}: nearest ${id}`).toBe(true);
          for (const x of scored) if (x.score > kth + 1e-9) expect(got.has(x.id), `${task} k=${k}: BM25 ${x.id}`).toBe(true);
          const keywordOnly = [...got].filter((id) => !nearest.includes(id));
          for (const id of keywordOnly) expect(scored.find((x) => x.id === id)!.score, `${task} k=${k}: ${id}`).toBeGreaterThanOrEqual(kth - 1e-9);
          expect(keywordOnly.length).toBeLessThanOrEqual(Math.min(k, scored.length));
        }
      }
    });

    it('with a filter, takes the k best by BM25 among the patterns that pass it', async () => {
      // Every third pattern is confidential; the keyword side must skip them, not just fill with fewer.
      const confidential = new Set(items.map((_, n) => makePattern(n + 1).id).filter((_, n) => n % 3 === 0));
      for (const id of confidential) await storage.patterns.classify(SCOPE_A, id, 'confidential');
      const filter = { classifications: ['public' as const, 'internal' as const] };
      for (const k of [1, 3, 6]) {
        const set = await storage.patterns.hybridCandidates(SCOPE_A, { vector: null, terms, vectorK: 0, keywordK: k, evalWindow: 0, filter });
        const scored = items
          .map((i, n) => ({ id: makePattern(n + 1).id, score: bm25OfText(selectiveTerms(terms, set.stats), i.task, set.stats) }))
          .filter((x) => x.score > 0 && !confidential.has(x.id))
          .sort((a, b) => b.score - a.score);
        const kth = scored[k - 1].score;
        const got = set.candidates.map((c) => c.id);
        expect(got, `k=${k}`).toHaveLength(k);
        for (const id of got) expect(confidential.has(id), `k=${k}: ${id}`).toBe(false);
        for (const x of scored) if (x.score > kth + 1e-9) expect(got, `k=${k}`).toContain(x.id);
      }
    });

    it('returns each candidate\'s and the mean\'s dot with the principal directions asked, and ranks with them removed in one order', async () => {
      const directions = principalComponents((await storage.patterns.sampleVectors(SCOPE_A, 200)).map((x) => x.vector));
      expect(directions).toHaveLength(2);
      const set = await storage.patterns.hybridCandidates(SCOPE_A, { vector: query.vector, terms, vectorK: 50, keywordK: 50, evalWindow: 0, directions });
      const mean = new Float64Array(DIM);
      for (const i of items) i.vector.forEach((x, d) => (mean[d] += x / items.length));
      expect(set.stats.mean_direction_dots).toHaveLength(2);
      set.stats.mean_direction_dots!.forEach((x, i) => expect(x).toBeCloseTo(dot(mean, directions[i]), 5));
      expect(set.candidates).toHaveLength(24);
      for (const c of set.candidates) {
        const item = items[Number(c.id.slice(1)) - 1];
        expect(c.direction_dots).toHaveLength(2);
        c.direction_dots!.forEach((x, i) => expect(x).toBeCloseTo(dot(item.vector, directions[i]), 5));
      }
      // Without directions asked: none returned.
      const plain = await storage.patterns.hybridCandidates(SCOPE_A, { vector: query.vector, terms, vectorK: 5, keywordK: 5, evalWindow: 0 });
      expect(plain.stats.mean_direction_dots ?? null).toBeNull();
      for (const c of plain.candidates) expect(c.direction_dots ?? null).toBeNull();
      // The ranking with the directions removed (weight 0.5), the same on every storage; tiers' centred cosine unchanged.
      const removal = { directions, vectorWeight: 0.5 };
      const ranked = rankCandidates(rescore(set, query.task, query.vector, terms, 0.7, 1, { removal }), RANKING);
      const reversed = rankCandidates(rescore({ ...set, candidates: [...set.candidates].reverse() }, query.task, query.vector, terms, 0.7, 1, { removal }), RANKING);
      expect(ranked.map((c) => c.id)).toEqual(reversed.map((c) => c.id));
      expect(ranked.slice(0, 6).map((c) => c.id)).toEqual(EXPECTED_WITH_REMOVAL);
      const centred = rescore(set, query.task, query.vector, terms, 0.7, 1);
      for (const c of ranked) expect(c.centered_cosine).toBe(centred.find((x) => x.id === c.id)!.centered_cosine);
    });

    it('reads the stored code as a second keyword field: BM25F candidates, figures and one order on every storage', async () => {
      const scope = { tenant_id: SCOPE_A.tenant_id, project_id: 'code-field' };
      const codes = [
        'def parseCsvColumn(path):\n    # sum the totals\n    return sum(float(r["amount"]) for r in csv.DictReader(open(path)))',
        'import requests\ndef fetch_with_retry(url, attempts=3):\n    return requests.get(url)  # HTTPBackoff later',
        'from PIL import Image\ndef resize_image(path, size):\n    return Image.open(path).resize(size)',
        'def sum_column(rows, name):\n    return sum(r[name] for r in rows)',
      ];
      const tasks = ['read the ledger file', 'call the service again when it fails', 'make the picture smaller', 'add up one field of every row'];
      for (const [i, code] of codes.entries()) {
        await storage.patterns.insert(scope, makePattern(400 + i, { task: tasks[i], code }), items[i].vector);
      }
      const queryTerms = distinctTerms('sum amount column csv');
      // Words found only in code: no candidate without the code field, BM25F finds them with it.
      const taskOnly = await storage.patterns.hybridCandidates(scope, { vector: null, terms: queryTerms, vectorK: 0, keywordK: 10, evalWindow: 0 });
      expect(taskOnly.candidates).toEqual([]);
      const set = await storage.patterns.hybridCandidates(scope, {
        vector: null, terms: queryTerms, vectorK: 0, keywordK: 10, evalWindow: 0, codeWeight: 1,
      });
      expect(set.stats.docs).toBe(4);
      expect(set.stats.totalTerms).toBe(tasks.reduce((n, t) => n + termsOf(t).length, 0));
      expect(set.stats.totalCodeTerms).toBe(codes.reduce((n, c) => n + codeTermsOf(c).length, 0));
      // Document frequency over task or code.
      const docsWith = (term: string) => codes.filter((c, i) => codeTermsOf(c).includes(term) || termsOf(tasks[i]).includes(term)).length;
      for (const term of queryTerms) expect(set.stats.df.get(term), term).toBe(docsWith(term));
      expect(new Set(set.candidates.map((c) => c.id))).toEqual(new Set([pid(400), pid(403)]));
      for (const c of set.candidates) expect(c.code_terms).toBe(codeTermText(codes[Number(c.id.slice(1)) - 400]));
      expect(set.candidates.find((c) => c.id === pid(400))!.code_terms.split(' ').slice(0, 5)).toEqual(['def', 'parse', 'csv', 'column', 'path']);
      const ranked = rankCandidates(rescore(set, 'sum amount column csv', null, queryTerms, 0.5, 1), RANKING);
      expect(ranked.map((c) => c.id)).toEqual([pid(400), pid(403)]);
      expect(ranked[0].code_bm25).toBe(ranked[0].bm25);

      // A code change follows (learn's replace): the old code's words find nothing, the new ones do.
      await storage.patterns.update(scope, makePattern(403, { task: tasks[3], code: 'def total(xs):\n    return xs' }), items[3].vector);
      const after = await storage.patterns.hybridCandidates(scope, {
        vector: null, terms: queryTerms, vectorK: 0, keywordK: 10, evalWindow: 0, codeWeight: 1,
      });
      expect(after.candidates.map((c) => c.id)).toEqual([pid(400)]);
      expect(after.stats.totalCodeTerms).toBe([...codes.slice(0, 3), 'def total(xs):\n    return xs'].reduce((n, c) => n + codeTermsOf(c).length, 0));
      await storage.patterns.delete(scope, pid(400));
      const gone = await storage.patterns.hybridCandidates(scope, {
        vector: null, terms: queryTerms, vectorK: 0, keywordK: 10, evalWindow: 0, codeWeight: 1,
      });
      expect(gone.candidates).toEqual([]);
      expect(gone.stats.df.get('csv') ?? 0).toBe(0);
    });

    it('follows deletes and task or vector replacements', async () => {
      const before = await storage.patterns.hybridCandidates(SCOPE_A, { vector: query.vector, terms, vectorK: 50, keywordK: 50, evalWindow: 0 });
      await storage.patterns.delete(SCOPE_A, makePattern(1).id);
      await storage.patterns.update(SCOPE_A, makePattern(2, { task: 'csv csv csv' }), items[0].vector);
      const after = await storage.patterns.hybridCandidates(SCOPE_A, { vector: query.vector, terms, vectorK: 50, keywordK: 50, evalWindow: 0 });
      const rest = items.slice(1).map((i, n) => (n === 0 ? { task: 'csv csv csv', vector: items[0].vector } : i));
      expect(after.stats.docs).toBe(before.stats.docs - 1);
      expect(after.stats.totalTerms).toBe(rest.reduce((n, i) => n + termsOf(i.task).length, 0));
      expect(after.stats.df.get('csv')).toBe(rest.filter((i) => termsOf(i.task).includes('csv')).length);
      const mean = new Float64Array(DIM);
      for (const i of rest) i.vector.forEach((x, d) => (mean[d] += x / rest.length));
      expect(after.stats.vectors).toBe(23);
      expect(after.stats.mean_norm2).toBeCloseTo(dot(mean, mean), 5);
    });
  });
}

/** The reference order: blend by hand (core functions), highest first, ties by id. */
function expectedOrder(set: HybridCandidateSet, task: string, unit: Float32Array, terms: string[]): string[] {
  return rankCandidates(rescore({ ...set, candidates: [...set.candidates].reverse() }, task, unit, terms, 0.7), RANKING).map((c) => c.id);
}
