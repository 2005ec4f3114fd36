/** Storage contract, part 4: a learn's writes (recordLearn) land together or not at all. */
import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/core/errors.js';
import type { MetricsCounters, RoiEvent, Scope } from '../../src/core/types.js';
import type { LearnPatternWrite, LearnRecord, Storage } from '../../src/ports/storage.js';
import { at, hitIds, makePattern, pid, SCOPE_A, SCOPE_B, vec } from './storage.contract.fixtures.js';

const NO_RUNS: MetricsCounters = { runs: 0, successes: 0, eval_sum: 0, recalls: 0, reusing_recalls: 0 };

function learnEvent(i: number, stored: boolean, evalScore: number): RoiEvent {
  return { at: at(i), kind: 'learn', stored, eval_score: evalScore, latency_ms: 4 };
}

function learnRecord(i: number, pattern: LearnPatternWrite, evalScore: number): LearnRecord {
  return { pattern, eval_score: evalScore, at: at(i), event: learnEvent(i, pattern.op !== 'keep', evalScore) };
}

/** Everything a learn can touch in a scope, to compare before and after a failed one. */
async function learnState(storage: Storage, scope: Scope, ids: string[]) {
  return {
    count: await storage.patterns.count(scope),
    patterns: await Promise.all(ids.map((id) => storage.patterns.get(scope, id))),
    evals: Object.fromEntries(await storage.evals.recent(scope, ids, 100)),
    metrics: await storage.metrics.get(scope),
    events: await storage.analytics.list(scope, { limit: 100 }),
  };
}

export function learnContract(current: () => Storage): void {
  let storage: Storage;
  beforeEach(() => {
    storage = current();
  });

  describe('recordLearn', () => {
    it('insert: the pattern with its vector, its first eval observation, the run and the ROI event', async () => {
      const record = learnRecord(10, { op: 'insert', pattern: makePattern(1, { eval_score: 6, success_score: 6 }), vector: vec(1) }, 6);
      await storage.recordLearn(SCOPE_A, record);
      expect(await storage.patterns.get(SCOPE_A, pid(1))).toEqual(makePattern(1, { eval_score: 6, success_score: 6 }));
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(1), 5))).toEqual([pid(1)]);
      expect((await storage.evals.recent(SCOPE_A, [pid(1)], 10)).get(pid(1))).toEqual([6]);
      expect(await storage.metrics.get(SCOPE_A)).toEqual({ ...NO_RUNS, runs: 1, successes: 1, eval_sum: 6 });
      expect(await storage.analytics.list(SCOPE_A, { limit: 10 })).toEqual([record.event]);
      // Nothing of it in another scope.
      expect(await learnState(storage, SCOPE_B, [pid(1)])).toEqual({
        count: 0, patterns: [null], evals: {}, metrics: NO_RUNS, events: [],
      });
    });

    it('replace and keep: the stored pattern replaced in place (vector kept) or left alone; each run observed and counted', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1, { success_score: 4, reuse_count: 3 }), vec(1));
      const better = makePattern(1, { code: 'better()', eval_score: 8, success_score: 8, reuse_count: 3, updated_at: at(20), last_aged_at: at(20) });
      await storage.recordLearn(SCOPE_A, learnRecord(20, { op: 'replace', pattern: better }, 8));
      await storage.recordLearn(SCOPE_A, learnRecord(21, { op: 'keep', id: pid(1) }, 3));
      expect(await storage.patterns.get(SCOPE_A, pid(1))).toEqual(better);
      expect(await storage.patterns.count(SCOPE_A)).toBe(1);
      const [hit] = await storage.patterns.search(SCOPE_A, vec(1), 1);
      expect(hit).toMatchObject({ pattern: { id: pid(1) }, similarity: expect.closeTo(1, 5) });
      expect((await storage.evals.recent(SCOPE_A, [pid(1)], 10)).get(pid(1))).toEqual([3, 8]);
      expect(await storage.metrics.get(SCOPE_A)).toEqual({ ...NO_RUNS, runs: 2, successes: 1, eval_sum: 11 });
      expect((await storage.analytics.list(SCOPE_A, { limit: 10 })).map((e) => [e.at, e.stored])).toEqual([[at(21), false], [at(20), true]]);
    });

    it('replace or keep of a pattern deleted meanwhile: no pattern, no orphan observation; the run still counts', async () => {
      await storage.recordLearn(SCOPE_A, learnRecord(30, { op: 'replace', pattern: makePattern(7) }, 7));
      await storage.recordLearn(SCOPE_A, learnRecord(31, { op: 'keep', id: pid(8) }, 2));
      // An observation would surface once a pattern with that id exists.
      await storage.patterns.insert(SCOPE_A, makePattern(7), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(8), vec(0, 1));
      expect(await learnState(storage, SCOPE_A, [pid(7), pid(8)])).toMatchObject({
        count: 2, patterns: [makePattern(7), makePattern(8)], evals: {}, metrics: { runs: 2, successes: 1, eval_sum: 9 },
      });
      expect(await storage.analytics.list(SCOPE_A, { limit: 10 })).toHaveLength(2);
    });

    it('a refused pattern write (its id exists) writes nothing of the learn', async () => {
      await storage.recordLearn(SCOPE_A, learnRecord(40, { op: 'insert', pattern: makePattern(1), vector: vec(1) }, 7));
      const before = await learnState(storage, SCOPE_A, [pid(1)]);
      const again = learnRecord(41, { op: 'insert', pattern: makePattern(1, { code: 'other()' }), vector: vec(0, 1) }, 9);
      await expect(storage.recordLearn(SCOPE_A, again)).rejects.toBeInstanceOf(ConflictError);
      expect(await learnState(storage, SCOPE_A, [pid(1)])).toEqual(before);
    });

    it('a write failing after the pattern\'s (an ROI event the store cannot encode) leaves nothing behind', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1, { success_score: 4 }), vec(1));
      const before = await learnState(storage, SCOPE_A, [pid(1), pid(2)]);
      // JSON cannot encode a BigInt: the event is the fault, found after the other writes were prepared.
      const unencodable = (i: number) => ({ ...learnEvent(i, true, 9), latency_ms: 5n as unknown as number });
      const insert = learnRecord(50, { op: 'insert', pattern: makePattern(2), vector: vec(0, 1) }, 9);
      await expect(storage.recordLearn(SCOPE_A, { ...insert, event: unencodable(50) })).rejects.toThrow();
      const replace = learnRecord(51, { op: 'replace', pattern: makePattern(1, { code: 'better()', success_score: 9 }) }, 9);
      await expect(storage.recordLearn(SCOPE_A, { ...replace, event: unencodable(51) })).rejects.toThrow();
      expect(await learnState(storage, SCOPE_A, [pid(1), pid(2)])).toEqual(before);
      expect(hitIds(await storage.patterns.search(SCOPE_A, vec(0, 1), 5))).toEqual([pid(1)]);
      // The store goes on working.
      await storage.recordLearn(SCOPE_A, insert);
      expect((await storage.evals.recent(SCOPE_A, [pid(2)], 10)).get(pid(2))).toEqual([9]);
    });
  });
}
