/**
 * Evaluation runs in the NDJSON governance export and import, on both storages
 * (docs/behavior.md "Evaluation runs"): the export ends with one `evaluation_run` line per run with its
 * cases; importing those lines restores the runs under their own ids, byte for byte, skips run
 * ids already stored, and a filtered export leaves runs out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationRun, RunCase } from '../../src/contracts/evaluations.js';
import { requirePostgres } from '../support/pg.js';
import { makeCase, makeRun, runId } from '../contract/storage.contract.evaluation-runs.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';

const hasPg = await requirePostgres('evaluation run transfer');
const database = perFileDatabase('evaluation_run_transfer');
const SCOPE = { tenant_id: 'default', project_id: 'default' };

/** Runs with every optional part filled somewhere: a finished baseline, a comparison, a running one. */
const RUNS: { run: EvaluationRun; cases: RunCase[] }[] = [
  {
    run: makeRun(1, {
      finished_at: '2026-01-02T00:00:00.000Z', blessed: true, ci_provider: 'github',
      gate: { min_score: 7, fail_on_adversarial: true, fail_on_high_variance: false, reducer: 'majority' },
      summary: { cases: 2, passed: 1, failed: 1, pass_rate: 0.5, pass_hat_k: 0.5, flaky: 1, cost_usd: 0.0123, tokens: { input: 120, output: 45 }, cache_hits: 1, cache_misses: 1, duration_ms: 812.5 },
    }),
    cases: [
      makeCase('z-last-name-first', { code: 'def f():\n    return "ünïcode ✓"', tokens: { input: 60, output: 20 }, cost_usd: 0.006, cache_hit: true, cache_hits: 3, repeats: 3, pass_rate: 2 / 3, flaky: true, repeat_failures: ['score 4 below 7'] }),
      makeCase('a-second', { passed: false, gate_failures: ['score 3 below 7'], median: 3, error: null, output: 'out' }),
    ],
  },
  {
    run: makeRun(2, { status: 'regressed', baseline_id: runId(1), comparison: { improved: 0, regressed: 1, unchanged: 1, new: 0, missing: 0 }, finished_at: '2026-01-03T00:00:00.000Z' }),
    cases: [makeCase('a-second', { failed_evaluators: 1, error: 'judge timed out', median: null, variance: null, adversarial: null, passed: false })],
  },
  { run: makeRun(3, { status: 'running', label: null, git: { commit: null, branch: null } }), cases: [] },
];

/** Every run of the project with its cases, as stored. */
async function storedRuns(h: Harness): Promise<{ run: EvaluationRun; cases: RunCase[] }[]> {
  const repo = h.app.deps.storage.evaluationRuns;
  const runs = await repo.listRuns(SCOPE, { limit: 100 });
  return Promise.all(runs.map(async (run) => ({ run, cases: await repo.listCases(SCOPE, run.id) })));
}

/** A finished run as the API answers it (a running run's answer counts its time so far). */
const runAnswer = async (h: Harness, id: string) => JSON.parse((await h.call('GET', `/v1/evaluations/${id}`)).body) as unknown;

/** The export's lines as sent. */
const exportText = async (h: Harness, query = '') =>
  (await h.call('GET', `/v1/governance/export${query}`)).body.split('\n').filter((l) => l !== '');
const exportLines = async (h: Harness, query = '') => (await exportText(h, query)).map((l) => JSON.parse(l) as Record<string, unknown>);
const runLinesAsSent = async (h: Harness) => (await exportText(h)).filter((l) => l.startsWith('{"type":"evaluation_run"'));

for (const storage of ['json', 'postgres'] as const) {
  describe.skipIf(storage === 'postgres' && !hasPg)(`evaluation runs in the export and import on ${storage}`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = storage === 'json' ? await jsonHarness() : await pgHarness(database);
      await h.call('POST', '/v1/learn', { task: 'Parse a CSV file and sum the amount column', code: 'def sums(path): ...', eval_score: 8 });
      const repo = h.app.deps.storage.evaluationRuns;
      await repo.putRuns(SCOPE, RUNS.map((r) => r.run));
      for (const { run, cases } of RUNS) for (const c of cases) await repo.putCase(SCOPE, run.id, c);
    }, 60_000);
    afterAll(async () => {
      await h?.close();
      if (storage === 'postgres') await database.drop();
    });

    it('exports each run with its cases after the records, and an import restores them byte for byte', async () => {
      const before = await storedRuns(h);
      expect(before.map((r) => r.run)).toEqual([...RUNS].reverse().map((r) => r.run));
      const answers = await Promise.all([runAnswer(h, runId(1)), runAnswer(h, runId(2))]);
      const sent = await runLinesAsSent(h);
      const lines = await exportLines(h);
      const runLines = lines.filter((l) => l.type === 'evaluation_run');
      expect(runLines.map((l) => (l.run as EvaluationRun).id)).toEqual([3, 2, 1].map(runId));
      expect(runLines[2]).toMatchObject({ tenant_id: 'default', project_id: 'default', cases: [{ case_id: 'z-last-name-first' }, { case_id: 'a-second' }] });
      expect(lines.slice(-3)).toEqual(runLines);
      expect(sent).toHaveLength(3);
      const records = lines.filter((l) => l.type === undefined);
      expect(records).toHaveLength(1);

      // Gone from the project (as after a deletion), then back from the export.
      expect(await h.app.deps.storage.evaluationRuns.deleteRuns(SCOPE, [1, 2, 3].map(runId))).toBe(3);
      expect(await storedRuns(h)).toEqual([]);
      const imported = await h.call('POST', '/v1/import', { records, evaluation_runs: runLines });
      expect(imported.statusCode, imported.body).toBe(200);
      expect(imported.json()).toMatchObject({ imported: 0, skipped: 1, evaluation_runs_imported: 3, evaluation_runs_skipped: 0 });
      expect(await storedRuns(h)).toEqual(before);
      expect(await Promise.all([runAnswer(h, runId(1)), runAnswer(h, runId(2))])).toEqual(answers);
      // Exported again, the restored runs are the same lines byte for byte.
      expect(await runLinesAsSent(h)).toEqual(sent);
    });

    it('skips run ids already stored and counts them', async () => {
      const before = await storedRuns(h);
      const runLines = (await exportLines(h)).filter((l) => l.type === 'evaluation_run');
      const changed = runLines.map((l) => ({ ...l, run: { ...(l.run as EvaluationRun), status: 'failed' } }));
      const again = await h.call('POST', '/v1/import', { records: [], evaluation_runs: changed });
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json()).toMatchObject({ imported: 0, evaluation_runs_imported: 0, evaluation_runs_skipped: 3 });
      expect(await storedRuns(h)).toEqual(before);
    });

    it('a blessed run whose label already has another baseline comes in unblessed', async () => {
      const line = { type: 'evaluation_run', run: makeRun(7, { blessed: true }), cases: [makeCase('c')] };
      const res = await h.call('POST', '/v1/import', { records: [], evaluation_runs: [line] });
      expect(res.json()).toMatchObject({ evaluation_runs_imported: 1 });
      const repo = h.app.deps.storage.evaluationRuns;
      expect((await repo.getRun(SCOPE, runId(7)))?.blessed).toBe(false);
      expect((await repo.getRun(SCOPE, runId(1)))?.blessed).toBe(true);
      expect(await repo.listCases(SCOPE, runId(7))).toEqual([makeCase('c')]);
      await repo.deleteRuns(SCOPE, [runId(7)]);
    });

    it('an export filtered by classification leaves the runs out', async () => {
      expect((await exportLines(h, '?classification=internal')).filter((l) => l.type === 'evaluation_run')).toEqual([]);
    });

    it('a malformed run line is a 422 and nothing is restored', async () => {
      const res = await h.call('POST', '/v1/import', { records: [], evaluation_runs: [{ type: 'evaluation_run', run: { ...makeRun(8), id: 'not an id' }, cases: [] }] });
      expect(res.statusCode).toBe(422);
      expect(await h.app.deps.storage.evaluationRuns.getRun(SCOPE, runId(8))).toBeNull();
    });
  });
}

describe('evaluation run lines go to the caller\'s project', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await jsonHarness();
  });
  afterAll(async () => h?.close());

  it('the line\'s tenant_id and project_id are ignored: the run lands in the importing project only', async () => {
    const line = { type: 'evaluation_run', tenant_id: 'default', project_id: 'default', run: makeRun(9), cases: [makeCase('c')] };
    const res = await h.call('POST', '/v1/import', { records: [], evaluation_runs: [line] }, { 'x-project-id': 'copy' });
    expect(res.json()).toMatchObject({ evaluation_runs_imported: 1 });
    const repo = h.app.deps.storage.evaluationRuns;
    expect(await repo.getRun({ tenant_id: 'default', project_id: 'copy' }, runId(9))).toEqual(makeRun(9));
    expect(await repo.getRun(SCOPE, runId(9))).toBeNull();
  });

  it('the export posted as an NDJSON body restores its records and runs', async () => {
    await h.call('POST', '/v1/learn', { task: 'Resize every PNG image in a folder', code: 'def thumbs(dir): ...', eval_score: 8 });
    await h.app.deps.storage.evaluationRuns.putRuns(SCOPE, [makeRun(10)]);
    await h.app.deps.storage.evaluationRuns.putCase(SCOPE, runId(10), makeCase('c'));
    const exported = (await h.call('GET', '/v1/governance/export')).body;
    const res = await h.server.inject({
      method: 'POST', url: '/v1/import', payload: exported, headers: { 'content-type': 'application/x-ndjson', 'x-project-id': 'ndjson' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ imported: 1, skipped: 0, total: 1, evaluation_runs_imported: 1, evaluation_runs_skipped: 0 });
    const ndjson = { tenant_id: 'default', project_id: 'ndjson' };
    expect(await h.app.deps.storage.evaluationRuns.getRun(ndjson, runId(10))).toEqual(makeRun(10));
    expect(await h.app.deps.storage.evaluationRuns.listCases(ndjson, runId(10))).toEqual([makeCase('c')]);
  });
});
