/** Storage contract, part 2: scope isolation, evals, feedback, skills, metrics, analytics, audit, meta. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { FeedbackCluster } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import {
  angled, at, audit, cluster, collect, hitIds, ids, makePattern, pid, roi, SCOPE_A, SCOPE_B, SCOPE_C, vec,
} from './storage.contract.fixtures.js';

export function repositoryContract(current: () => Storage): void {
  let storage: Storage;
  beforeEach(() => {
    storage = current();
  });

  describe('scope isolation', () => {
    it('patterns of one scope are invisible and untouchable from the others', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      for (const other of [SCOPE_B, SCOPE_C]) {
        expect(await storage.patterns.get(other, pid(1))).toBeNull();
        expect(await storage.patterns.getMany(other, [pid(1)])).toEqual([]);
        expect(await storage.patterns.count(other)).toBe(0);
        expect(await storage.patterns.search(other, vec(1), 5)).toEqual([]);
        expect(await collect(storage.patterns.iterate(other))).toEqual([]);
        expect(await storage.patterns.update(other, makePattern(1, { task: 'hijack' }))).toBe(false);
        expect(await storage.patterns.delete(other, pid(1))).toBe(false);
        await storage.patterns.recordReuse(other, [pid(1)], 1, at(5));
        await storage.patterns.setVector(other, pid(1), vec(0, 1));
      }
      expect(await storage.patterns.get(SCOPE_A, pid(1))).toEqual(makePattern(1));
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 1))).toEqual([pid(1)]);
      expect((await storage.patterns.search(SCOPE_A, vec(1), 1))[0].similarity).toBeCloseTo(1, 5);
    });

    it('the same id can live in two scopes as two independent patterns', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1, { task: 'in A' }), vec(1));
      await storage.patterns.insert(SCOPE_C, makePattern(1, { task: 'in C' }), vec(0, 1));
      await storage.evals.add(SCOPE_A, pid(1), 4, at(1));
      await storage.skills.set(SCOPE_A, pid(1), ['a-only']);
      expect((await storage.patterns.get(SCOPE_C, pid(1)))!.task).toBe('in C');
      expect((await storage.evals.recent(SCOPE_C, [pid(1)], 5)).size).toBe(0);
      expect(await storage.skills.get(SCOPE_C, pid(1))).toEqual([]);
      expect(await storage.patterns.delete(SCOPE_C, pid(1))).toBe(true);
      expect((await storage.patterns.get(SCOPE_A, pid(1)))!.task).toBe('in A');
      expect((await storage.evals.recent(SCOPE_A, [pid(1)], 5)).get(pid(1))).toEqual([4]);
      expect(await storage.skills.get(SCOPE_A, pid(1))).toEqual(['a-only']);
    });

    it('evals, feedback, skills, metrics and analytics are per scope', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      await storage.evals.add(SCOPE_A, pid(1), 8, at(1));
      await storage.feedback.upsert(SCOPE_A, [cluster('c1')]);
      await storage.skills.set(SCOPE_A, pid(1), ['go']);
      await storage.metrics.recordRun(SCOPE_A, 9);
      await storage.metrics.recordRecall(SCOPE_A, true);
      await storage.analytics.append(SCOPE_A, roi(1));
      for (const other of [SCOPE_B, SCOPE_C]) {
        expect((await storage.evals.recent(other, [pid(1)], 5)).size).toBe(0);
        expect(await storage.feedback.list(other)).toEqual([]);
        await storage.feedback.remove(other, ['c1']);
        expect(await storage.skills.get(other, pid(1))).toEqual([]);
        expect((await storage.skills.search(other, ['go'], false)).size).toBe(0);
        expect(await storage.metrics.get(other)).toEqual({ runs: 0, successes: 0, eval_sum: 0, recalls: 0, reusing_recalls: 0 });
        expect(await storage.analytics.list(other, { limit: 10 })).toEqual([]);
      }
      expect(ids(await storage.feedback.list(SCOPE_A))).toEqual(['c1']);
      expect((await storage.metrics.get(SCOPE_A)).runs).toBe(1);
      expect(await storage.analytics.list(SCOPE_A, { limit: 10 })).toHaveLength(1);
    });
  });

  describe('evals', () => {
    it('recent gives the last n observations newest first; ids without any are absent', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(2), vec(0, 1));
      await storage.patterns.insert(SCOPE_A, makePattern(3), vec(0, 0, 1));
      const scores = [7, 3, 9, 4.5, 6, 8, 2];
      for (const [i, s] of scores.entries()) await storage.evals.add(SCOPE_A, pid(1), s, at(100 + i));
      await storage.evals.add(SCOPE_A, pid(2), 5, at(100));
      const recent = await storage.evals.recent(SCOPE_A, [pid(1), pid(2), pid(3), pid(404)], 5);
      expect(recent.get(pid(1))).toEqual([2, 8, 6, 4.5, 9]);
      expect(recent.get(pid(2))).toEqual([5]);
      expect(recent.has(pid(3))).toBe(false);
      expect(recent.has(pid(404))).toBe(false);
      expect((await storage.evals.recent(SCOPE_A, [pid(1)], 2)).get(pid(1))).toEqual([2, 8]);
      expect((await storage.evals.recent(SCOPE_A, [], 5)).size).toBe(0);
    });

    it('recent orders by the observation time, not by arrival (an import adds older ones later)', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      for (const [s, t] of [[1, 200], [2, 100], [3, 300], [4, 150]]) await storage.evals.add(SCOPE_A, pid(1), s, at(t));
      expect((await storage.evals.recent(SCOPE_A, [pid(1)], 5)).get(pid(1))).toEqual([3, 1, 4, 2]);
      expect((await storage.evals.recent(SCOPE_A, [pid(1)], 2)).get(pid(1))).toEqual([3, 1]);
      // Asked twice, the same answer (nothing handed out is shared with the store).
      (await storage.evals.recent(SCOPE_A, [pid(1)], 5)).get(pid(1))!.reverse();
      expect((await storage.evals.recent(SCOPE_A, [pid(1)], 5)).get(pid(1))).toEqual([3, 1, 4, 2]);
    });

    it('recent gives the newest 50 of more observations, newest first', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      for (let i = 0; i < 60; i++) await storage.evals.add(SCOPE_A, pid(1), i / 10, at(100 + i));
      const newest = Array.from({ length: 50 }, (_, i) => (59 - i) / 10);
      expect((await storage.evals.recent(SCOPE_A, [pid(1)], 50)).get(pid(1))).toEqual(newest);
    });
  });

  describe('feedback', () => {
    it('upsert inserts and replaces by id; remove deletes by id', async () => {
      expect(await storage.feedback.list(SCOPE_A)).toEqual([]);
      await storage.feedback.upsert(SCOPE_A, [cluster('c1'), cluster('c2', { tasks: ['a', 'b'] })]);
      const c1b = cluster('c1', { count: 3, score: 0.7, last_seen: at(9), last_decayed_at: at(8), tasks: ['x', 'y', 'z'] });
      await storage.feedback.upsert(SCOPE_A, [c1b, cluster('c3')]);
      const byId = (xs: FeedbackCluster[]) => [...xs].sort((a, b) => a.id.localeCompare(b.id));
      expect(byId(await storage.feedback.list(SCOPE_A))).toEqual([c1b, cluster('c2', { tasks: ['a', 'b'] }), cluster('c3')]);
      await storage.feedback.remove(SCOPE_A, ['c2', 'missing']);
      expect(byId(await storage.feedback.list(SCOPE_A))).toEqual([c1b, cluster('c3')]);
      await storage.feedback.remove(SCOPE_A, []);
      await storage.feedback.upsert(SCOPE_A, []);
      expect(await storage.feedback.list(SCOPE_A)).toHaveLength(2);
    });
  });

  describe('skills', () => {
    beforeEach(async () => {
      for (const n of [1, 2, 3, 4]) await storage.patterns.insert(SCOPE_A, makePattern(n), vec(1, n));
      await storage.skills.set(SCOPE_A, pid(1), ['python', 'parsing']);
      await storage.skills.set(SCOPE_A, pid(2), ['python', 'http']);
      await storage.skills.set(SCOPE_A, pid(3), ['rust']);
    });

    it('set and get; set replaces; an empty list removes', async () => {
      expect((await storage.skills.get(SCOPE_A, pid(1))).sort()).toEqual(['parsing', 'python']);
      expect(await storage.skills.get(SCOPE_A, pid(4))).toEqual([]);
      await storage.skills.set(SCOPE_A, pid(1), ['csv']);
      expect(await storage.skills.get(SCOPE_A, pid(1))).toEqual(['csv']);
      await storage.skills.set(SCOPE_A, pid(1), []);
      expect(await storage.skills.get(SCOPE_A, pid(1))).toEqual([]);
      expect((await storage.skills.search(SCOPE_A, ['csv'], false)).size).toBe(0);
    });

    it('search with any or all of the tags', async () => {
      const any = await storage.skills.search(SCOPE_A, ['python', 'rust'], false);
      expect([...any.keys()].sort()).toEqual([pid(1), pid(2), pid(3)]);
      expect([...any.get(pid(2))!].sort()).toEqual(['http', 'python']);
      const all = await storage.skills.search(SCOPE_A, ['python', 'http'], true);
      expect([...all.keys()]).toEqual([pid(2)]);
      expect((await storage.skills.search(SCOPE_A, ['python', 'rust'], true)).size).toBe(0);
      expect((await storage.skills.search(SCOPE_A, ['nothing'], false)).size).toBe(0);
    });
  });

  describe('metrics', () => {
    it('counts runs (success at eval_score >= 5), eval sum, recalls and reusing recalls', async () => {
      expect(await storage.metrics.get(SCOPE_A)).toEqual({ runs: 0, successes: 0, eval_sum: 0, recalls: 0, reusing_recalls: 0 });
      for (const s of [7, 3, 5, 4.99, 10]) await storage.metrics.recordRun(SCOPE_A, s);
      for (const r of [true, false, true, false, false]) await storage.metrics.recordRecall(SCOPE_A, r);
      const m = await storage.metrics.get(SCOPE_A);
      expect(m).toEqual({ runs: 5, successes: 3, eval_sum: expect.closeTo(29.99, 9), recalls: 5, reusing_recalls: 2 });
    });

    it('keeps every concurrent increment', async () => {
      await Promise.all(Array.from({ length: 40 }, (_, i) => storage.metrics.recordRun(SCOPE_A, i % 2 ? 8 : 2)));
      const m = await storage.metrics.get(SCOPE_A);
      expect(m.runs).toBe(40);
      expect(m.successes).toBe(20);
      expect(m.eval_sum).toBe(200);
    });
  });

  describe('analytics', () => {
    it('lists newest first, limited, with an inclusive since filter', async () => {
      for (let i = 0; i < 12; i++) {
        await storage.analytics.append(SCOPE_A, roi(i, i % 2 ? { kind: 'learn', stored: true, eval_score: 6, best_similarity: undefined, best_tier: undefined, matches: undefined } : {}));
      }
      const all = await storage.analytics.list(SCOPE_A, { limit: 100 });
      expect(all.map((e) => e.at)).toEqual(Array.from({ length: 12 }, (_, i) => at(11 - i)));
      expect(all[0]).toMatchObject({ kind: 'learn', stored: true, eval_score: 6 });
      expect(all[1]).toEqual(roi(10));
      expect((await storage.analytics.list(SCOPE_A, { limit: 3 })).map((e) => e.at)).toEqual([at(11), at(10), at(9)]);
      const since = await storage.analytics.list(SCOPE_A, { since: at(8), limit: 100 });
      expect(since.map((e) => e.at)).toEqual([at(11), at(10), at(9), at(8)]);
      expect((await storage.analytics.list(SCOPE_A, { since: at(8), limit: 2 })).map((e) => e.at)).toEqual([at(11), at(10)]);
    });

    it('keeps only the newest 10,000 events per scope', async () => {
      const TOTAL = 10_050;
      // The oldest events go in one by one so "oldest" is unambiguous for every adapter.
      for (let i = 0; i < 100; i++) await storage.analytics.append(SCOPE_A, roi(i));
      for (let start = 100; start < TOTAL; start += 250) {
        const end = Math.min(TOTAL, start + 250);
        await Promise.all(Array.from({ length: end - start }, (_, j) => storage.analytics.append(SCOPE_A, roi(start + j))));
      }
      await storage.analytics.append(SCOPE_B, roi(0));
      const kept = await storage.analytics.list(SCOPE_A, { limit: 20_000 });
      expect(kept).toHaveLength(10_000);
      const times = new Set(kept.map((e) => e.at));
      for (let i = 0; i < 50; i++) expect(times.has(at(i))).toBe(false);
      for (const i of [50, 51, 99, 5000, TOTAL - 1]) expect(times.has(at(i))).toBe(true);
      expect(kept[0].at).toBe(at(TOTAL - 1));
      expect(await storage.analytics.list(SCOPE_A, { since: at(0), limit: 20_000 })).toHaveLength(10_000);
      expect(await storage.analytics.list(SCOPE_B, { limit: 10 })).toHaveLength(1);
    });
  });

  describe('recordRecall', () => {
    it('returns the page as it was, bumps the reused patterns of its scope, counts the recall and appends its ROI event', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1, { success_score: 7 }), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(2, { success_score: 9.95 }), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(3, { success_score: 5 }), vec(1));
      await storage.patterns.insert(SCOPE_B, makePattern(1, { success_score: 7 }), vec(1));
      const event = roi(40, { best_similarity: 0.93, best_tier: 'duplicate', matches: 3 });

      const page = await storage.recordRecall(SCOPE_A, {
        page_ids: [pid(2), pid(1), pid(3), pid(404)], reused_ids: [pid(1), pid(2), pid(404)], bonus: 0.1, at: at(40), reused: true, event,
      });
      // The page is read before the bumps (pre-recall values), missing ids skipped, in any order.
      expect([...page].sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        makePattern(1, { success_score: 7 }), makePattern(2, { success_score: 9.95 }), makePattern(3, { success_score: 5 }),
      ]);
      expect(await storage.patterns.get(SCOPE_A, pid(1))).toMatchObject({ reuse_count: 1, success_score: expect.closeTo(7.1, 9), updated_at: at(40) });
      expect(await storage.patterns.get(SCOPE_A, pid(2))).toMatchObject({ reuse_count: 1, success_score: 10 });
      expect(await storage.patterns.get(SCOPE_A, pid(3))).toEqual(makePattern(3, { success_score: 5 }));
      expect(await storage.patterns.get(SCOPE_B, pid(1))).toEqual(makePattern(1, { success_score: 7 }));
      expect(await storage.metrics.get(SCOPE_A)).toMatchObject({ recalls: 1, reusing_recalls: 1 });
      expect(await storage.analytics.list(SCOPE_A, { limit: 10 })).toEqual([event]);

      // A recall without reusable matches only counts and logs.
      expect(await storage.recordRecall(SCOPE_A, { page_ids: [], reused_ids: [], bonus: 0.1, at: at(41), reused: false, event: roi(41) })).toEqual([]);
      expect(await storage.metrics.get(SCOPE_A)).toMatchObject({ recalls: 2, reusing_recalls: 1 });
      expect((await storage.analytics.list(SCOPE_A, { limit: 10 })).map((e) => e.at)).toEqual([at(41), at(40)]);
      expect((await storage.patterns.get(SCOPE_A, pid(1)))?.reuse_count).toBe(1);
      expect(await storage.metrics.get(SCOPE_B)).toMatchObject({ recalls: 0 });
      expect(await storage.analytics.list(SCOPE_B, { limit: 10 })).toEqual([]);
    });
  });

  describe('audit', () => {
    it('appends and lists newest first, filtered by tenant and kind, limited', async () => {
      expect(await storage.audit.list({ limit: 10 })).toEqual([]);
      await storage.audit.append(audit(1));
      await storage.audit.append(audit(2, { kind: 'PII_REDACTED', detail: { email: 2 } }));
      await storage.audit.append(audit(3, { tenant_id: 'tenant-c' }));
      await storage.audit.append(audit(4, { tenant_id: null, project_id: null, kind: 'rate_limited' }));
      expect((await storage.audit.list({ limit: 10 })).map((e) => e.request_id)).toEqual(['req-4', 'req-3', 'req-2', 'req-1']);
      expect(await storage.audit.list({ limit: 1 })).toEqual([audit(4, { tenant_id: null, project_id: null, kind: 'rate_limited' })]);
      expect((await storage.audit.list({ tenant_id: 'tenant-a', limit: 10 })).map((e) => e.request_id)).toEqual(['req-2', 'req-1']);
      expect(await storage.audit.list({ kind: 'PII_REDACTED', limit: 10 })).toEqual([audit(2, { kind: 'PII_REDACTED', detail: { email: 2 } })]);
      expect(await storage.audit.list({ tenant_id: 'tenant-a', kind: 'rate_limited', limit: 10 })).toEqual([]);
    });
  });

  describe('meta', () => {
    it('embedding info is null on an empty store and round-trips', async () => {
      expect(await storage.meta.getEmbeddingInfo()).toBeNull();
      await storage.meta.setEmbeddingInfo({ provider: 'local', model: 'mini', dimension: 384 });
      expect(await storage.meta.getEmbeddingInfo()).toEqual({ provider: 'local', model: 'mini', dimension: 384 });
      await storage.meta.setEmbeddingInfo({ provider: 'openai', model: 'text-embedding-3-small', dimension: 1536 });
      expect(await storage.meta.getEmbeddingInfo()).toEqual({ provider: 'openai', model: 'text-embedding-3-small', dimension: 1536 });
    });
  });

  describe('concurrency', () => {
    it('concurrent writes to one scope all land', async () => {
      await Promise.all(Array.from({ length: 50 }, (_, n) => storage.patterns.insert(SCOPE_A, makePattern(n), angled(n))));
      await Promise.all(Array.from({ length: 50 }, (_, n) => storage.patterns.recordReuse(SCOPE_A, [pid(n % 5)], 0.01, at(1))));
      expect(await storage.patterns.count(SCOPE_A)).toBe(50);
      expect((await storage.patterns.get(SCOPE_A, pid(0)))!.reuse_count).toBe(10);
      expect(hitIds(await storage.patterns.search(SCOPE_A, angled(49), 1))).toEqual([pid(49)]);
    });
  });
}
