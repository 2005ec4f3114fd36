/**
 * Storage contract: recall traces and outcomes (docs/behavior.md "Outcomes"). A recall's trace
 * is written by its own bookkeeping (recordRecall, recordLookup); outcomes are refused for an
 * unknown recall or a key it did not return, replace an earlier report of the same recall and
 * pattern, are read newest first per pattern with their queries, carry their success credit, and
 * go with retention, their pattern and their scope.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { OutcomeReport, RecallTrace } from '../../src/core/outcome-types.js';
import { recallTrace } from '../../src/core/recall-trace.js';
import { patternKey, type Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { at, collect, makePattern, pid, roi, SCOPE_A, SCOPE_B, SCOPE_C, vec } from './storage.contract.fixtures.js';

const key = (n: number) => patternKey(pid(n));

function trace(id: string, seconds: number, query: string, keys: number[]): RecallTrace {
  return recallTrace(id, at(seconds), query, vec(1, 0.5, -0.25), keys.map(key));
}

function outcome(recallId: string, n: number, passed: boolean, seconds: number, detail: string | null = null): OutcomeReport {
  return { recall_id: recallId, pattern_key: key(n), passed, score: passed ? 9 : 2, detail, source: 'tests', at: at(seconds) };
}

async function recordRecall(storage: Storage, scope: Scope, t: RecallTrace): Promise<void> {
  await storage.recordRecall(scope, {
    page_ids: [], reused_ids: [], bonus: 0.1, at: t.at, reused: false, event: roi(1), trace: t,
  });
}

export function outcomesContract(current: () => Storage): void {
  describe('outcomes', () => {
    let storage: Storage;
    beforeEach(async () => {
      storage = current();
      for (const n of [1, 2, 3]) await storage.patterns.insert(SCOPE_A, makePattern(n), vec(1, n));
    });

    it('keeps a POST recall\'s trace and a read-only recall\'s trace, vector included', async () => {
      const t = trace('r1', 100, 'Sort a list!', [1, 2]);
      await recordRecall(storage, SCOPE_A, t);
      await storage.recordLookup(SCOPE_A, { event: roi(2, { readonly: true }), trace: trace('r2', 101, 'lookup', [3]) });
      const got = await storage.outcomes.getTrace(SCOPE_A, 'r1');
      expect(got).toMatchObject({ recall_id: 'r1', query: 'Sort a list!', query_normalized: 'sort a list', pattern_keys: [key(1), key(2)] });
      expect(Date.parse(got!.at)).toBe(Date.parse(t.at));
      expect([...got!.query_vector!.values]).toEqual([...t.query_vector!.values]);
      expect(got!.query_vector!.scale).toBeCloseTo(t.query_vector!.scale, 5);
      expect((await storage.outcomes.getTrace(SCOPE_A, 'r2'))?.pattern_keys).toEqual([key(3)]);
      // Other scopes do not see it.
      for (const other of [SCOPE_B, SCOPE_C]) expect(await storage.outcomes.getTrace(other, 'r1')).toBeNull();
      expect(await storage.outcomes.getTrace(SCOPE_A, 'nope')).toBeNull();
    });

    it('refuses an unknown recall and a key the recall did not return; replaces the same recall and key', async () => {
      await recordRecall(storage, SCOPE_A, trace('r1', 100, 'sort', [1, 2]));
      expect(await storage.outcomes.hasAny(SCOPE_A)).toBe(false);
      expect(await storage.outcomes.report(SCOPE_A, outcome('r9', 1, true, 110))).toBe('unknown_recall');
      expect(await storage.outcomes.report(SCOPE_A, outcome('r1', 3, true, 110))).toBe('not_a_match');
      expect(await storage.outcomes.report(SCOPE_B, outcome('r1', 1, true, 110))).toBe('unknown_recall');
      expect(await storage.outcomes.report(SCOPE_A, outcome('r1', 1, true, 110))).toBe('stored');
      expect(await storage.outcomes.report(SCOPE_A, outcome('r1', 1, false, 120, 'off by one'))).toBe('replaced');
      const list = await storage.outcomes.listForPattern(SCOPE_A, pid(1), { limit: 10 });
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ recall_id: 'r1', pattern_id: pid(1), passed: false, score: 2, detail: 'off by one', source: 'tests', query: 'sort' });
      expect(Date.parse(list[0].at)).toBe(Date.parse(at(120)));
      expect(await storage.outcomes.hasAny(SCOPE_A)).toBe(true);
      expect(await storage.outcomes.hasAny(SCOPE_C)).toBe(false);
      expect(await storage.outcomes.count(SCOPE_A)).toEqual({ traces: 1, outcomes: 1 });
    });

    it('evidenceFor: per pattern, newest first, capped, with the recall\'s query; ids without outcomes absent', async () => {
      for (let i = 0; i < 5; i++) {
        await recordRecall(storage, SCOPE_A, trace(`r${i}`, 100 + i, `query ${i}`, [1, 2]));
        await storage.outcomes.report(SCOPE_A, outcome(`r${i}`, 1, i % 2 === 0, 200 + i));
      }
      await storage.outcomes.report(SCOPE_A, outcome('r0', 2, false, 300, 'wrong'));
      const ev = await storage.outcomes.evidenceFor(SCOPE_A, [pid(1), pid(2), pid(3)], 3);
      expect([...ev.keys()].sort()).toEqual([pid(1), pid(2)]);
      expect(ev.get(pid(1))!.map((e) => e.recall_id)).toEqual(['r4', 'r3', 'r2']);
      expect(ev.get(pid(1))![0]).toMatchObject({ query: 'query 4', query_normalized: 'query 4', passed: true });
      expect(ev.get(pid(1))![0].query_vector!.values.length).toBe(8);
      expect(ev.get(pid(2))!.map((e) => [e.recall_id, e.passed, e.detail])).toEqual([['r0', false, 'wrong']]);
      expect((await storage.outcomes.evidenceFor(SCOPE_A, [pid(1)])).get(pid(1))).toHaveLength(5);
      expect((await storage.outcomes.evidenceFor(SCOPE_B, [pid(1)])).size).toBe(0);
    });

    it('a stored report moves the pattern\'s success_score by its credit, a replacement does not', async () => {
      await recordRecall(storage, SCOPE_A, trace('r1', 100, 'sort', [1, 2]));
      expect(await storage.outcomes.report(SCOPE_A, outcome('r1', 1, true, 110), { credit: 0.1 })).toBe('stored');
      expect((await storage.patterns.get(SCOPE_A, pid(1)))!.success_score).toBeCloseTo(7.1, 9);
      expect(await storage.outcomes.report(SCOPE_A, outcome('r1', 1, true, 111), { credit: 0.1 })).toBe('replaced');
      expect((await storage.patterns.get(SCOPE_A, pid(1)))!.success_score).toBeCloseTo(7.1, 9);
      expect(await storage.outcomes.report(SCOPE_A, outcome('r1', 2, false, 112), { credit: -0.1 })).toBe('stored');
      const p2 = (await storage.patterns.get(SCOPE_A, pid(2)))!;
      expect(p2.success_score).toBeCloseTo(6.9, 9);
      expect(p2.updated_at).toBe(makePattern(2).updated_at);
    });

    it('retention purges traces and outcomes older than the cut-off, nothing newer', async () => {
      await recordRecall(storage, SCOPE_A, trace('old', 100, 'old', [1]));
      await recordRecall(storage, SCOPE_A, trace('new', 500, 'new', [1, 2]));
      await storage.outcomes.report(SCOPE_A, outcome('old', 1, false, 150));
      await storage.outcomes.report(SCOPE_A, outcome('new', 1, true, 550));
      await storage.outcomes.report(SCOPE_A, outcome('new', 2, true, 560));
      expect(await storage.outcomes.purgeBefore(SCOPE_A, at(300))).toEqual({ traces: 1, outcomes: 1 });
      expect(await storage.outcomes.getTrace(SCOPE_A, 'old')).toBeNull();
      expect(await storage.outcomes.report(SCOPE_A, outcome('old', 1, true, 600))).toBe('unknown_recall');
      expect((await storage.outcomes.listForPattern(SCOPE_A, pid(1), { limit: 10 })).map((o) => o.recall_id)).toEqual(['new']);
      expect(await storage.outcomes.count(SCOPE_A)).toEqual({ traces: 1, outcomes: 2 });
      expect(await storage.outcomes.purgeBefore(SCOPE_A, at(300))).toEqual({ traces: 0, outcomes: 0 });
    });

    it('a deleted pattern takes its outcomes; a deleted scope takes traces and outcomes, neighbours untouched', async () => {
      await storage.patterns.insert(SCOPE_B, makePattern(1), vec(1));
      for (const scope of [SCOPE_A, SCOPE_B]) {
        await recordRecall(storage, scope, trace('r1', 100, 'sort', [1, 2]));
        await storage.outcomes.report(scope, outcome('r1', 1, false, 110));
      }
      await storage.outcomes.report(SCOPE_A, outcome('r1', 2, true, 111));
      expect(await storage.patterns.delete(SCOPE_A, pid(1))).toBe(true);
      expect(await storage.outcomes.listForPattern(SCOPE_A, pid(1), { limit: 10 })).toEqual([]);
      expect((await storage.outcomes.evidenceFor(SCOPE_A, [pid(1), pid(2)])).size).toBe(1);
      expect(await storage.outcomes.count(SCOPE_A)).toEqual({ traces: 1, outcomes: 1 });
      await storage.governance.deleteScope({ ...SCOPE_A }, { at: at(10_000), keepRunningOperations: [] });
      expect(await storage.outcomes.count(SCOPE_A)).toEqual({ traces: 0, outcomes: 0 });
      expect(await storage.outcomes.getTrace(SCOPE_A, 'r1')).toBeNull();
      expect(await storage.outcomes.count(SCOPE_B)).toEqual({ traces: 1, outcomes: 1 });
    });

    it('iterate and restore carry traces with their outcomes (export and import)', async () => {
      await recordRecall(storage, SCOPE_A, trace('r1', 100, 'sort', [1, 2]));
      await recordRecall(storage, SCOPE_A, trace('r2', 200, 'no outcome', [1]));
      await storage.outcomes.report(SCOPE_A, outcome('r1', 1, false, 110, 'lesson'));
      await storage.outcomes.report(SCOPE_A, outcome('r1', 2, true, 120));
      const exported = await collect(storage.outcomes.iterate(SCOPE_A));
      expect(exported.map((e) => e.trace.recall_id)).toEqual(['r1']);
      expect(exported[0].outcomes.map((o) => [o.pattern_key, o.passed, o.detail])).toEqual([[key(1), false, 'lesson'], [key(2), true, null]]);
      await storage.patterns.insert(SCOPE_C, makePattern(1), vec(1));
      await storage.outcomes.restore(SCOPE_C, exported[0]);
      const back = await collect(storage.outcomes.iterate(SCOPE_C));
      // The outcome of a pattern the target does not hold is left out.
      expect(back.map((e) => e.outcomes.map((o) => o.pattern_key))).toEqual([[key(1)]]);
      expect(back[0].trace).toMatchObject({ recall_id: 'r1', query: 'sort', pattern_keys: [key(1), key(2)] });
    });
  });
}
