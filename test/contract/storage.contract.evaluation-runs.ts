/**
 * Storage contract, evaluation runs (docs/behavior.md "Evaluation runs"): runs and their cases,
 * newest first with filters and keyset paging, cases replaced by case_id in their first order,
 * one baseline per label, deletions that take the cases along, scope isolation and governance.
 */
import { describe, expect, it } from 'vitest';
import type { EvaluationRun, RunCase } from '../../src/contracts/evaluations.js';
import type { Storage } from '../../src/ports/storage.js';
import { at, SCOPE_A, SCOPE_B, SCOPE_C } from './storage.contract.fixtures.js';

/** Ids are 18 base36 characters that sort as they were made. */
export const runId = (n: number) => `run${String(n).padStart(15, '0')}`;

export function makeRun(n: number, over: Partial<EvaluationRun> = {}): EvaluationRun {
  return {
    id: runId(n),
    created_at: at(n),
    finished_at: null,
    label: 'main',
    git: { commit: `c${n}`, branch: 'main' },
    ci_provider: null,
    judge: { provider: 'openai', model: 'm', prompt_version: 'v1', evaluators: 3, temperature: 0.7 },
    gate: { min_score: null, fail_on_adversarial: false, fail_on_high_variance: false },
    status: 'passed',
    summary: { cases: 0, passed: 0, failed: 0, pass_rate: null, pass_hat_k: null, flaky: 0, cost_usd: null, tokens: null, cache_hits: 0, cache_misses: 0, duration_ms: 0 },
    baseline_id: null,
    comparison: null,
    blessed: false,
    ...over,
  };
}

export function makeCase(id: string, over: Partial<RunCase> = {}): RunCase {
  return {
    case_id: id, name: id, task: `task ${id}`, code: 'x = 1', output: null,
    task_hash: 'a', code_hash: 'b', output_hash: 'c',
    evaluators: [{ evaluator: 1, score: 7, feedback: 'fine' }],
    median: 7, variance: 0, adversarial: false, passed: true, gate_failures: [],
    repeats: 1, pass_rate: null, flaky: null, tokens: null, cost_usd: null, duration_ms: 5, cache_hit: null,
    failed_evaluators: 0, error: null, evaluated_at: at(1),
    ...over,
  };
}

const OPTS = { at: at(10_000), keepRunningOperations: ['governance_delete'] };

export function evaluationRunsContract(current: () => Storage): void {
  describe('evaluation runs', () => {
    it('stores, replaces and reads runs; absent ones are null', async () => {
      const repo = current().evaluationRuns;
      await repo.putRuns(SCOPE_A, [makeRun(1)]);
      expect(await repo.getRun(SCOPE_A, runId(1))).toEqual(makeRun(1));
      await repo.putRuns(SCOPE_A, [makeRun(1, { status: 'failed', label: 'other' })]);
      expect(await repo.getRun(SCOPE_A, runId(1))).toMatchObject({ status: 'failed', label: 'other' });
      expect(await repo.getRun(SCOPE_A, runId(2))).toBeNull();
      expect(await repo.getRun(SCOPE_B, runId(1))).toBeNull();
    });

    it('lists newest first with filters and keyset paging', async () => {
      const repo = current().evaluationRuns;
      await repo.putRuns(SCOPE_A, [
        makeRun(1), makeRun(2, { label: 'pr', git: { commit: 'x', branch: 'feature/x' } }), makeRun(3, { status: 'failed' }),
        makeRun(4, { blessed: true }), makeRun(5, { label: null, git: { commit: null, branch: null } }),
      ]);
      const ids = async (f: Parameters<typeof repo.listRuns>[1]) => (await repo.listRuns(SCOPE_A, f)).map((r) => r.id);
      expect(await ids({ limit: 10 })).toEqual([5, 4, 3, 2, 1].map(runId));
      expect(await ids({ limit: 2 })).toEqual([5, 4].map(runId));
      expect(await ids({ limit: 2, before: runId(4) })).toEqual([3, 2].map(runId));
      expect(await ids({ limit: 10, label: 'main' })).toEqual([4, 3, 1].map(runId));
      expect(await ids({ limit: 10, branch: 'feature/x' })).toEqual([runId(2)]);
      expect(await ids({ limit: 10, status: 'failed' })).toEqual([runId(3)]);
      expect(await ids({ limit: 10, blessed: true })).toEqual([runId(4)]);
      expect(await ids({ limit: 10, blessed: false, created_before: at(3) })).toEqual([2, 1].map(runId));
      expect(await repo.listRuns(SCOPE_B, { limit: 10 })).toEqual([]);
    });

    it('moves the blessing of a label in one write (one baseline per label)', async () => {
      const repo = current().evaluationRuns;
      await repo.putRuns(SCOPE_A, [makeRun(1, { blessed: true })]);
      await repo.putRuns(SCOPE_A, [makeRun(2, { blessed: true }), makeRun(1, { blessed: false })]);
      expect((await repo.listRuns(SCOPE_A, { label: 'main', blessed: true, limit: 5 })).map((r) => r.id)).toEqual([runId(2)]);
    });

    it('adds cases to a stored run only, replacing a case_id in place', async () => {
      const repo = current().evaluationRuns;
      expect(await repo.putCase(SCOPE_A, runId(1), makeCase('a'))).toBe(false);
      await repo.putRuns(SCOPE_A, [makeRun(1)]);
      expect(await repo.putCase(SCOPE_A, runId(1), makeCase('b'))).toBe(true);
      expect(await repo.putCase(SCOPE_A, runId(1), makeCase('a'))).toBe(true);
      expect(await repo.putCase(SCOPE_A, runId(1), makeCase('b', { median: 2, passed: false }))).toBe(true);
      const cases = await repo.listCases(SCOPE_A, runId(1));
      expect(cases.map((c) => [c.case_id, c.median])).toEqual([['b', 2], ['a', 7]]);
      expect(cases[1]).toEqual(makeCase('a'));
      expect(await repo.putCase(SCOPE_B, runId(1), makeCase('c'))).toBe(false);
      expect(await repo.listCases(SCOPE_B, runId(1))).toEqual([]);
    });

    it('deletes runs with their cases', async () => {
      const repo = current().evaluationRuns;
      await repo.putRuns(SCOPE_A, [makeRun(1), makeRun(2)]);
      await repo.putCase(SCOPE_A, runId(1), makeCase('a'));
      expect(await repo.deleteRuns(SCOPE_A, [runId(1), runId(9)])).toBe(1);
      expect(await repo.getRun(SCOPE_A, runId(1))).toBeNull();
      expect(await repo.listCases(SCOPE_A, runId(1))).toEqual([]);
      expect((await repo.listRuns(SCOPE_A, { limit: 5 })).map((r) => r.id)).toEqual([runId(2)]);
      // A new run of the same id starts without the old cases.
      await repo.putRuns(SCOPE_A, [makeRun(1)]);
      expect(await repo.listCases(SCOPE_A, runId(1))).toEqual([]);
    });

    it('a governance deletion takes the target\'s runs and cases and leaves the others', async () => {
      const storage = current();
      const repo = storage.evaluationRuns;
      for (const scope of [SCOPE_A, SCOPE_B, SCOPE_C]) {
        await repo.putRuns(scope, [makeRun(1)]);
        await repo.putCase(scope, runId(1), makeCase('a'));
      }
      const counted = await storage.governance.countScope({ ...SCOPE_A }, OPTS);
      expect(counted.projects_deleted).toBe(1);
      await storage.governance.deleteScope({ ...SCOPE_A }, OPTS);
      expect(await repo.listRuns(SCOPE_A, { limit: 5 })).toEqual([]);
      expect(await repo.listCases(SCOPE_A, runId(1))).toEqual([]);
      expect(await repo.listCases(SCOPE_B, runId(1))).toHaveLength(1);
      await storage.governance.deleteScope({ tenant_id: 'tenant-a', project_id: null }, OPTS);
      expect(await repo.listRuns(SCOPE_B, { limit: 5 })).toEqual([]);
      expect(await repo.listRuns(SCOPE_C, { limit: 5 })).toHaveLength(1);
    });
  });
}
