/**
 * Storage contract, part 7: ties. Patterns of the same task and vector score the same by cosine,
 * BM25 and blend; the one rule on every storage is that the smaller id goes first, at the k-th
 * place of a search as in the order of its answer, so recall's ranking (ties by id as well) puts
 * the smaller id first and dedup keeps it. The vectors here are small (unindexed on PostgreSQL),
 * so every search is exact; an HNSW walk (indexed dimensions) is approximate, and which of
 * several equal rows it finds is not promised (docs/behavior.md "Recall" 2).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { distinctTerms } from '../../src/core/bm25.js';
import { unitVector } from '../../src/core/hybrid.js';
import { WorkBudget } from '../../src/core/slices.js';
import type { RecallCandidate } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { rankInSlices } from '../../src/services/recall-dedup.js';
import { blendInSlices, blendOrder } from '../../src/services/recall-hybrid.js';
import { angled, collect, hitIds, ids, makePattern, pid, SCOPE_A, vec } from './storage.contract.fixtures.js';

/** Six copies of one task and vector, inserted out of id order, and three others further away. */
const COPIES = [5, 2, 6, 1, 4, 3];
const OTHERS = [7, 8, 9];
const TASK = 'export the weekly sales report to a spreadsheet';
const QUERY = { task: TASK, vector: vec(1) };
const terms = distinctTerms(TASK);
const slices = () => new WorkBudget(() => new Promise((resolve) => setImmediate(resolve)), 3);

export function tiesContract(current: () => Storage): void {
  let storage: Storage;
  describe('ties: the smaller id first, everywhere', () => {
    beforeEach(async () => {
      storage = current();
      for (const n of COPIES) await storage.patterns.insert(SCOPE_A, makePattern(n, { task: TASK }), vec(1));
      for (const [i, n] of OTHERS.entries()) await storage.patterns.insert(SCOPE_A, makePattern(n, { task: `other report ${n}` }), angled(20 + 10 * i));
    });

    it('search: equal similarities in id order, and a k that cuts them keeps the smaller ids', async () => {
      for (const k of [1, 2, 3, 5]) {
        const hits = await storage.patterns.search(SCOPE_A, QUERY.vector, k);
        expect(hitIds(hits), `k=${k}`).toEqual([1, 2, 3, 4, 5].slice(0, k).map(pid));
      }
      const all = await storage.patterns.search(SCOPE_A, QUERY.vector, 20);
      expect(hitIds(all)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map(pid));
    });

    it('hybrid candidates: each side cut through equal scores keeps the smaller ids', async () => {
      const unit = unitVector(QUERY.vector);
      for (const k of [1, 2, 4]) {
        const nearest = await storage.patterns.hybridCandidates(SCOPE_A, { vector: unit, terms, vectorK: k, keywordK: 0, evalWindow: 0 });
        expect(nearest.candidates.map((c) => c.id).sort(), `vector k=${k}`).toEqual([1, 2, 3, 4].slice(0, k).map(pid));
        const keyword = await storage.patterns.hybridCandidates(SCOPE_A, { vector: null, terms, vectorK: 0, keywordK: k, evalWindow: 0 });
        expect(keyword.candidates.map((c) => c.id).sort(), `keyword k=${k}`).toEqual([1, 2, 3, 4].slice(0, k).map(pid));
      }
    });

    it('iterate (the keyword fallback\'s walk) goes in id order', async () => {
      expect(ids(await collect(storage.patterns.iterate(SCOPE_A)))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map(pid));
    });

    it('recall ranks equal scores by id, and dedup keeps the smallest id of equal tasks (hybrid and cosine ranking)', async () => {
      const unit = unitVector(QUERY.vector);
      const ranking = { evalWeighted: true, keep: 10 };
      const set = await storage.patterns.hybridCandidates(SCOPE_A, { vector: unit, terms, vectorK: 3, keywordK: 3, evalWindow: 5 });
      const blended = await blendInSlices(set, TASK, unit, terms, 0.65, slices());
      const hybridAll = await rankInSlices(blended, { ...ranking, deduplicate: false }, slices(), blendOrder);
      expect(ids(hybridAll).slice(0, 3)).toEqual([1, 2, 3].map(pid));
      const hybridKept = await rankInSlices(blended, { ...ranking, deduplicate: true }, slices(), blendOrder);
      expect(hybridKept[0].id).toBe(pid(1));

      // Cosine ranking: the search's hits, ranked with no tie-break of the caller's own.
      const hits = await storage.patterns.search(SCOPE_A, QUERY.vector, 4, undefined, 5);
      const found: RecallCandidate[] = hits.map(({ pattern, similarity, recent_evals }) => ({
        id: pattern.id, task: pattern.task, similarity, recent_evals, updated_at: pattern.updated_at,
      }));
      // Whatever order they come in.
      for (const order of [found, [...found].reverse()]) {
        expect(ids(await rankInSlices(order, { ...ranking, deduplicate: false }, slices()))).toEqual([1, 2, 3, 4].map(pid));
        expect(ids(await rankInSlices(order, { ...ranking, deduplicate: true }, slices()))).toEqual([pid(1)]);
      }
    });
  });
}
