/**
 * Storage contract, part 5: billing's tenant pattern quota is checked by the store in the same
 * atomic step as the insert (recordLearn, writeBatch), so concurrent writes in two projects of
 * one tenant never together pass it. Exact outcomes, whatever order the writes run in.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { QuotaExceededError } from '../../src/core/errors.js';
import type { BatchWrite, LearnPatternWrite, LearnRecord, Storage, TenantPatternQuota } from '../../src/ports/storage.js';
import { angled, at, makePattern, pid, SCOPE_A, SCOPE_B, SCOPE_C, vec } from './storage.contract.fixtures.js';

const RESET = '2025-02-01';
const quota = (limit: number): TenantPatternQuota => ({ limit, reset_date: RESET });

function learnRecord(i: number, pattern: LearnPatternWrite, limit: number): LearnRecord {
  return {
    pattern,
    eval_score: 7,
    at: at(i),
    event: { at: at(i), kind: 'learn', stored: pattern.op !== 'keep', eval_score: 7, latency_ms: 3 },
    tenant_quota: quota(limit),
  };
}

const insert = (n: number): LearnPatternWrite => ({ op: 'insert', pattern: makePattern(n), vector: angled(n * 7) });

/** The settled results split, each refusal checked to be the quota's 429 with its fields. */
function outcome(results: PromiseSettledResult<unknown>[], limit: number) {
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
  for (const err of refused) {
    expect(err).toBeInstanceOf(QuotaExceededError);
    expect(err).toMatchObject({ code: 'quota_exceeded', metric: 'patterns', limit, reset_date: RESET });
  }
  return { stored: results.length - refused.length, refused: refused as QuotaExceededError[] };
}

async function tenantA(storage: Storage): Promise<number> {
  return (await storage.patterns.count(SCOPE_A)) + (await storage.patterns.count(SCOPE_B));
}

export function quotaContract(current: () => Storage): void {
  let storage: Storage;
  beforeEach(() => {
    storage = current();
  });

  describe('tenant pattern quota', () => {
    it('recordLearn: concurrent inserts in two projects of one tenant store exactly what fits; a refused learn writes nothing', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(2), vec(0, 1));
      await storage.patterns.insert(SCOPE_B, makePattern(3), vec(0, 0, 1));
      // Another tenant's patterns count toward its own quota only.
      await storage.patterns.insert(SCOPE_C, makePattern(4), vec(1));
      const limit = 6;
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => storage.recordLearn(i % 2 ? SCOPE_B : SCOPE_A, learnRecord(100 + i, insert(100 + i), limit))),
      );
      const { stored, refused } = outcome(results, limit);
      expect(stored).toBe(3);
      expect(refused).toHaveLength(9);
      // Refused only once the tenant was full: no learn saw room that another then took.
      for (const err of refused) expect(err.current).toBe(limit);
      expect(await tenantA(storage)).toBe(limit);
      const runs = (await storage.metrics.get(SCOPE_A)).runs + (await storage.metrics.get(SCOPE_B)).runs;
      const events = (await storage.analytics.list(SCOPE_A, { limit: 100 })).length + (await storage.analytics.list(SCOPE_B, { limit: 100 })).length;
      expect({ runs, events }).toEqual({ runs: 3, events: 3 });
      await expect(storage.recordLearn(SCOPE_C, learnRecord(200, insert(200), 2))).resolves.toBeUndefined();
      expect(await storage.patterns.count(SCOPE_C)).toBe(2);
    });

    it('recordLearn: replace and keep add no pattern and pass at the limit', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      await storage.patterns.insert(SCOPE_B, makePattern(2), vec(0, 1));
      const better = makePattern(1, { code: 'better()', eval_score: 9, success_score: 9, updated_at: at(50) });
      await storage.recordLearn(SCOPE_A, learnRecord(50, { op: 'replace', pattern: better }, 2));
      await storage.recordLearn(SCOPE_B, learnRecord(51, { op: 'keep', id: pid(2) }, 2));
      expect(await storage.patterns.get(SCOPE_A, pid(1))).toEqual(better);
      await expect(storage.recordLearn(SCOPE_B, learnRecord(52, insert(52), 2))).rejects.toMatchObject({ metric: 'patterns', current: 2, limit: 2 });
      expect((await storage.metrics.get(SCOPE_A)).runs + (await storage.metrics.get(SCOPE_B)).runs).toBe(2);
    });

    it('writeBatch: concurrent batches in two projects store only whole batches that fit; replacements are not counted', async (ctx) => {
      if (!storage.patterns.writeBatch) ctx.skip();
      const writeBatch = storage.patterns.writeBatch!.bind(storage.patterns);
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      await storage.patterns.insert(SCOPE_B, makePattern(2), vec(0, 1));
      await storage.patterns.insert(SCOPE_B, makePattern(3), vec(0, 0, 1));
      const limit = 8;
      const batch = (first: number): BatchWrite[] =>
        [first, first + 1].map((n) => ({ record: makePattern(n), vector: angled(n * 7), replace: false }));
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => writeBatch(i % 2 ? SCOPE_B : SCOPE_A, batch(100 + 2 * i), quota(limit))),
      );
      const { stored, refused } = outcome(results, limit);
      // 3 + 2 + 2 = 7: a third batch of two would make 9.
      expect(stored).toBe(2);
      for (const err of refused) expect(err.current).toBe(7);
      expect(await tenantA(storage)).toBe(7);
      // Nothing of a refused batch: every stored id belongs to a whole batch.
      const ids = Array.from({ length: 12 }, (_, i) => pid(100 + i));
      const found = [...(await storage.patterns.getMany(SCOPE_A, ids)), ...(await storage.patterns.getMany(SCOPE_B, ids))].map((p) => p.id);
      expect(found).toHaveLength(4);
      for (const id of found) expect(found).toContain(pid(Number(id.slice(1)) ^ 1));

      // One new pattern plus a replacement: only the new one counts, and it fits exactly.
      const mixed: BatchWrite[] = [
        { record: makePattern(1, { code: 'replaced()' }), vector: vec(1), replace: true },
        { record: makePattern(300), vector: angled(30), replace: false },
      ];
      await writeBatch(SCOPE_A, mixed, quota(limit));
      expect(await tenantA(storage)).toBe(limit);
      await expect(writeBatch(SCOPE_B, [{ record: makePattern(301), vector: angled(40), replace: false }], quota(limit)))
        .rejects.toMatchObject({ metric: 'patterns', current: limit, limit });
    });
  });
}
