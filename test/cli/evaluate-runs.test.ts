import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvaluationRun, RunDetailResponse, RunListResponse, CompareResponse } from '../../src/contracts/evaluations.js';
import { costUsd, DEFAULT_MODEL_PRICES } from '../../src/core/pricing.js';
import { reply, startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { fakeProviderEnv } from '../support/llm-server.js';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * The CI scenario of docs/behavior.md "Evaluation runs", with the real binary against a real
 * server whose judges are the fake provider (OpenAI SDK), on both storages: a passing baseline
 * is blessed; the next run makes one case worse (regressed: exit 101) and adds one (new); the
 * run after drops one (missing: the gate fails, exit 100); failing runs never become baselines.
 * The judges score a case by the `SCORE=n` marker in its code, and disagree with themselves
 * (8, 2, 8, …) on a case whose code says FLAKY. Needs `npm run build`.
 */

const hasPg = await requirePostgres('evaluation runs on PostgreSQL');
/** Every judge call's usage, so a case's tokens and cost are known exactly (gpt-4o-mini, the shipped price). */
const USAGE = { input_tokens: 700, output_tokens: 40 };
const callCost = costUsd({ input: USAGE.input_tokens, output: USAGE.output_tokens }, DEFAULT_MODEL_PRICES['gpt-4o-mini']);

const jsonl = (cases: Record<string, string>) =>
  Object.entries(cases).map(([id, score]) => JSON.stringify({ id, task: `task of ${id}`, code: `# SCORE=${score}\nprint('${id}')` })).join('\n');

describe.each([
  { storage: 'json' as const },
  ...(hasPg ? [{ storage: 'postgres' as const }] : []),
])('evaluation runs in CI ($storage)', ({ storage }) => {
  let fake: FakeLlm;
  let dir: { path: string; remove(): Promise<void> };
  let server: ServerHandle;
  let database: TestDatabase | null = null;

  beforeAll(async () => {
    fake = await startFakeLlm();
    let flakyCalls = 0;
    fake.script((call) => {
      const overall = call.prompt.includes('FLAKY') ? [8, 2, 8][flakyCalls++ % 3] : Number(/SCORE=(\d+(?:\.\d+)?)/.exec(call.prompt)?.[1] ?? 5);
      return reply.json({ task_alignment: overall, code_quality: overall, workspace_usage: overall, robustness: overall, overall, feedback: `Scored ${overall}: name things better.`, hardcoded: false }, { usage: USAGE });
    });
    dir = await tempDir('svc-eval-runs-');
    let storageEnv: Record<string, string> = {};
    if (storage === 'postgres') {
      database = await createTestDatabase('eval_runs');
      const schema = await createMigratedSchema(database, 'runs');
      storageEnv = { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url, SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true' };
    }
    server = await startServer({
      dataPath: join(dir.path, 'data'),
      env: { ...fakeProviderEnv(fake, 'provider_a'), ...storageEnv, SERVICE_RATE_LIMIT_EXPENSIVE: '10000', SERVICE_RATE_LIMIT_DEFAULT: '10000' },
    });
  });
  afterAll(async () => {
    await server?.stop();
    await fake?.close();
    await database?.drop();
    await dir?.remove();
  });

  const cli = (args: string[], env: Record<string, string> = {}) => runCli([...args, '--url', server.url], { env });
  const file = async (name: string, text: string) => {
    const path = join(dir.path, name);
    await writeFile(path, text);
    return path;
  };
  const ciFlags = ['--min-score', '6', '--num-evals', '2', '--label', 'main', '--baseline', 'main', '--bless-on-pass'];

  it('blesses a passing baseline, flags a regression (101), fails a missing case (100) and never blesses a failing run', async () => {
    // Run 1: three passing cases, no baseline yet → passed and blessed.
    const first = await cli(['evaluate', '--batch', await file('v1.jsonl', jsonl({ alpha: '9', beta: '9', gamma: '9' })), ...ciFlags,
      '--git-commit', 'aaaa1111', '--git-branch', 'main', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const run1 = EvaluationRun.parse(JSON.parse(first.stdout).run);
    expect(run1).toMatchObject({ status: 'passed', blessed: true, label: 'main', git: { commit: 'aaaa1111', branch: 'main' }, baseline_id: null });
    expect(run1.summary).toMatchObject({ cases: 3, passed: 3, failed: 0, pass_rate: 1 });
    expect(run1.judge).toMatchObject({ provider: 'openai', evaluators: 2, temperature: 0.7 });
    expect(first.stderr).toContain(`run ${run1.id}: passed`);
    expect(first.stderr).toContain('blessed as the baseline of main');

    // Run 2: beta drops from 9 to 7 (still above the gate, beyond the noise margin), delta arrives.
    const markdown = join(dir.path, 'comment.md');
    const junit = join(dir.path, 'run2.xml');
    const second = await cli(['evaluate', '--batch', await file('v2.jsonl', jsonl({ alpha: '9', beta: '7', gamma: '9', delta: '8' })), ...ciFlags,
      '--git-commit', 'bbbb2222', '--git-branch', 'feature/x', '--markdown', markdown, '--junit', junit, '--json']);
    expect(second.code, second.stderr).toBe(101);
    const out2 = JSON.parse(second.stdout) as { run: unknown; comparison: unknown; summary: { exit_code: number } };
    const run2 = EvaluationRun.parse(out2.run);
    expect(run2).toMatchObject({ status: 'regressed', blessed: false, baseline_id: run1.id, comparison: { regressed: 1, new: 1, unchanged: 2, missing: 0, improved: 0 } });
    expect(out2.summary.exit_code).toBe(101);
    expect(second.stderr).toContain('regressed: beta');

    const comment = await readFile(markdown, 'utf8');
    expect(comment.startsWith('<!-- service-evaluate -->\n')).toBe(true);
    expect(comment).toContain('4 of 4 passed (100%) — regressed');
    expect(comment).toContain('**Pass rate** 100% vs baseline 100% (±0 pts)');
    expect(comment).toContain('**Newly regressed (1):** `beta` (9 → 7)');
    expect(comment).toContain('**New (1):** `delta`');
    // alpha and gamma are unchanged since run 1: their verdicts come from the judge cache.
    expect(comment).toContain('judge cache: 2 hits, 2 misses');
    expect(comment).toContain(`[Run \`${run2.id}\` in the console](${server.url}/console#/evaluations/${run2.id})`);
    expect(comment).toContain('branch `feature/x`');

    const xml = await readFile(junit, 'utf8');
    expect(xml).toContain(`<property name="run_id" value="${run2.id}"/>`);
    expect(xml).toContain('<property name="status" value="regressed"/>');
    expect(xml).toContain('<property name="pass_rate" value="1"/>');
    expect(xml).toContain('<property name="flaky" value="0"/>');
    expect(xml).toContain(`<property name="baseline_id" value="${run1.id}"/>`);
    const beta = /<testcase name="beta"[\s\S]*?<\/testcase>/.exec(xml)![0];
    expect(beta).toContain('<failure message="regressed against the baseline: median 9 → 7" type="regression">');
    expect(beta).toContain('<property name="case_id" value="beta"/>');
    expect(beta).toContain('<property name="repeats" value="1"/>');
    expect(/<testsuite [^>]*tests="4" failures="1" errors="0"/.test(xml)).toBe(true);

    // Run 3: gamma is gone → missing → the gate fails, and --bless-on-pass blesses nothing. The
    // commit and branch come from the CI environment.
    const junit3 = join(dir.path, 'run3.xml');
    const third = await cli(['evaluate', '--batch', await file('v3.jsonl', jsonl({ alpha: '9', beta: '9', delta: '8' })), ...ciFlags, '--junit', junit3, '--json'], {
      GITHUB_ACTIONS: 'true', GITHUB_SHA: 'cccc3333', GITHUB_REF_NAME: 'main',
    });
    expect(third.code, third.stderr).toBe(100);
    const run3 = EvaluationRun.parse(JSON.parse(third.stdout).run);
    expect(run3).toMatchObject({ status: 'failed', blessed: false, git: { commit: 'cccc3333', branch: 'main' }, ci_provider: 'github-actions' });
    expect(run3.comparison).toMatchObject({ missing: 1, improved: 0, unchanged: 2 });
    expect(third.stderr).toContain('missing: gamma');
    const xml3 = await readFile(junit3, 'utf8');
    expect(xml3).toMatch(/<testcase name="gamma"[^>]*>\s*<failure message="missing: the baseline run has this case, this run does not" type="missing">/);

    // A failing or regressed run is never made the baseline, by hand either.
    for (const refused of [run3, run2]) {
      const bless = await cli(['evaluate', 'bless', refused.id, '--json']);
      expect(bless.code).toBe(1);
      expect(JSON.parse(bless.stderr)).toMatchObject({ error: { status: 409 } });
      expect(bless.stderr).toContain('only a passed run becomes a baseline');
    }
    const baselines = RunListResponse.parse(JSON.parse((await cli(['evaluations', 'list', '--label', 'main', '--json'])).stdout));
    expect(baselines.runs.map((r) => [r.id, r.blessed])).toEqual([[run3.id, false], [run2.id, false], [run1.id, true]]);

    // Listing filters and keyset paging.
    const page1 = RunListResponse.parse(JSON.parse((await cli(['evaluations', 'list', '--limit', '2', '--json'])).stdout));
    expect(page1.runs.map((r) => r.id)).toEqual([run3.id, run2.id]);
    const page2 = RunListResponse.parse(JSON.parse((await cli(['evaluations', 'list', '--limit', '2', '--cursor', page1.next_cursor!, '--json'])).stdout));
    expect(page2).toMatchObject({ runs: [{ id: run1.id }], next_cursor: null });
    const byBranch = RunListResponse.parse(JSON.parse((await cli(['evaluations', 'list', '--branch', 'feature/x', '--json'])).stdout));
    expect(byBranch.runs.map((r) => r.id)).toEqual([run2.id]);
    const failed = RunListResponse.parse(JSON.parse((await cli(['evaluations', 'list', '--status', 'failed', '--json'])).stdout));
    expect(failed.runs.map((r) => r.id)).toEqual([run3.id]);
    const table = await cli(['evaluations', 'list', '--format', 'table']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(run1.id);
    expect(table.stdout).toMatch(/regressed/);

    // A run's cases keep task, code, output hashes and each judge's feedback.
    const detail = RunDetailResponse.parse(JSON.parse((await cli(['evaluations', 'show', run2.id, '--json'])).stdout));
    expect(detail.cases.map((c) => c.case_id).sort()).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    const betaCase = detail.cases.find((c) => c.case_id === 'beta')!;
    expect(betaCase).toMatchObject({ task: 'task of beta', median: 7, passed: true, repeats: 1, error: null });
    expect(betaCase.code).toContain('SCORE=7');
    expect(betaCase.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(betaCase.evaluators).toEqual([
      { evaluator: 1, score: 7, feedback: 'Scored 7: name things better.' },
      { evaluator: 2, score: 7, feedback: 'Scored 7: name things better.' },
    ]);

    // Compare by label, regressions first; a wider noise margin calls the same drop unchanged.
    const compared = CompareResponse.parse(JSON.parse((await cli(['evaluations', 'compare', run2.id, 'main', '--json'])).stdout));
    expect(compared.baseline.id).toBe(run1.id);
    expect(compared.cases.map((c) => [c.case_id, c.change])).toEqual([['beta', 'regressed'], ['delta', 'new'], ['alpha', 'unchanged'], ['gamma', 'unchanged']]);
    const wide = CompareResponse.parse(JSON.parse((await cli(['evaluations', 'compare', run2.id, run1.id, '--regression-delta', '2.5', '--json'])).stdout));
    expect(wide.counts).toMatchObject({ regressed: 0, unchanged: 3, new: 1 });
    const text = await cli(['evaluations', 'compare', run2.id, 'main', '--format', 'table']);
    expect(text.stdout).toContain('1 regressed, 0 improved, 2 unchanged, 1 new, 0 missing');
  });

  it('repeats of a case are one case of the run (flaky, pass rate, the reducer\'s verdict); a rerun of unchanged cases is served from the cache', async () => {
    const chatCallsFor = (marker: string) => fake.chatRequests().filter((r) => r.call?.prompt.includes(marker)).length;
    const cases = { steady: '# SCORE=9\nprint("steady")', wobbly: '# FLAKY\nprint("wobbly")' };
    const batch = (rows: Record<string, string>) => Object.entries(rows).map(([id, code]) => JSON.stringify({ id, task: `task of ${id}`, code })).join('\n');
    const repeatFlags = ['--num-evals', '1', '--repeat', '3', '--reducer', 'majority', '--min-score', '5', '--label', 'repeats', '--baseline', 'repeats', '--bless-on-pass', '--json'];

    // Run 1: wobbly is judged 8, 2, 8: flaky, 2 of 3 passed, a majority: the run passes and is blessed.
    const first = await cli(['evaluate', '--batch', await file('r1.jsonl', batch(cases)), ...repeatFlags]);
    expect(first.code, first.stderr).toBe(0);
    const out1 = JSON.parse(first.stdout) as { run: unknown; summary: Record<string, unknown>; cases: { id: string; pass_rate: number; tokens: unknown; cost_usd: number }[] };
    const run1 = EvaluationRun.parse(out1.run);
    expect(run1).toMatchObject({ status: 'passed', blessed: true, gate: { reducer: 'majority', min_score: 5 } });
    expect(chatCallsFor('FLAKY')).toBe(3);
    const stored1 = RunDetailResponse.parse(JSON.parse((await cli(['evaluations', 'show', run1.id, '--json'])).stdout));
    const wobbly = stored1.cases.find((c) => c.case_id === 'wobbly')!;
    expect(stored1.cases).toHaveLength(2);
    expect(wobbly).toMatchObject({
      repeats: 3, flaky: true, passed: true, gate_failures: [], repeat_failures: ['median score 2 is below --min-score 5'], median: 8, cache_hit: false, cache_hits: 0,
      tokens: { input: 3 * USAGE.input_tokens, output: 3 * USAGE.output_tokens },
      evaluators: [{ evaluator: 1, score: 8, feedback: 'Scored 8: name things better.' }],
    });
    // Printed numbers are rounded to 4 decimals (core/output-numbers.ts).
    expect(wobbly.pass_rate).toBeCloseTo(2 / 3, 4);
    expect(wobbly.cost_usd).toBeCloseTo(3 * callCost, 9);
    expect(stored1.cases.find((c) => c.case_id === 'steady')).toMatchObject({ repeats: 3, pass_rate: 1, flaky: false, passed: true });
    expect(stored1.run.summary).toMatchObject({
      cases: 2, passed: 2, flaky: 1, pass_hat_k: 0.5, cache_hits: 0, cache_misses: 6, tokens: { input: 6 * USAGE.input_tokens, output: 6 * USAGE.output_tokens },
    });
    expect(stored1.run.summary.cost_usd).toBeCloseTo(6 * callCost, 9);
    // What the CLI printed is what the run recorded.
    for (const figure of ['flaky', 'pass_hat_k', 'cache_hits', 'cache_misses', 'tokens', 'cost_usd'] as const) {
      expect(out1.summary[figure], figure).toEqual(stored1.run.summary[figure]);
    }
    const printedWobbly = out1.cases.find((c) => c.id === 'wobbly')!;
    expect(printedWobbly.tokens).toEqual(wobbly.tokens);
    expect(printedWobbly.cost_usd).toBe(wobbly.cost_usd);

    // Run 2 against the blessed run 1: the two unchanged cases come from the cache (no call for
    // them, flakiness kept), one new case is judged.
    const callsBefore = fake.chatRequests().length;
    const second = await cli(['evaluate', '--batch', await file('r2.jsonl', batch({ ...cases, added: '# SCORE=7\nprint("added")' })), ...repeatFlags]);
    expect(second.code, second.stderr).toBe(0);
    const run2 = EvaluationRun.parse(JSON.parse(second.stdout).run);
    expect(run2).toMatchObject({ status: 'passed', baseline_id: run1.id, comparison: { unchanged: 2, new: 1, regressed: 0, missing: 0 } });
    expect(fake.chatRequests().length - callsBefore).toBe(3);
    expect(chatCallsFor('FLAKY')).toBe(3);
    expect(chatCallsFor('print("steady")')).toBe(3);
    const stored2 = RunDetailResponse.parse(JSON.parse((await cli(['evaluations', 'show', run2.id, '--json'])).stdout));
    for (const id of ['steady', 'wobbly']) {
      expect(stored2.cases.find((c) => c.case_id === id), id).toMatchObject({ repeats: 3, cache_hit: true, cache_hits: 3, cost_usd: 0, tokens: { input: 0, output: 0 } });
    }
    expect(stored2.cases.find((c) => c.case_id === 'wobbly')).toMatchObject({ flaky: true, passed: true });
    expect(stored2.cases.find((c) => c.case_id === 'added')).toMatchObject({ repeats: 3, cache_hit: false, cache_hits: 0, pass_rate: 1 });
    expect(stored2.run.summary).toMatchObject({ cases: 3, flaky: 1, cache_hits: 6, cache_misses: 3, tokens: { input: 3 * USAGE.input_tokens, output: 3 * USAGE.output_tokens } });
    expect(stored2.run.summary.pass_hat_k).toBeCloseTo(2 / 3, 4);
    expect(JSON.parse(second.stdout).summary).toMatchObject({ cache_hits: 6, cache_misses: 3, flaky: 1 });

    // Under `all` the same repeats fail the case, naming the count and the reducer.
    const strict = await cli(['evaluate', '--batch', await file('r3.jsonl', batch(cases)), '--num-evals', '1', '--repeat', '3', '--reducer', 'all', '--min-score', '5', '--json']);
    expect(strict.code, strict.stderr).toBe(100);
    const run3 = EvaluationRun.parse(JSON.parse(strict.stdout).run);
    expect(run3).toMatchObject({ status: 'failed', gate: { reducer: 'all' }, summary: { passed: 1, failed: 1, flaky: 1, cache_hits: 6, cache_misses: 0 } });
    const stored3 = RunDetailResponse.parse(JSON.parse((await cli(['evaluations', 'show', run3.id, '--json'])).stdout));
    expect(stored3.cases.find((c) => c.case_id === 'wobbly')).toMatchObject({
      passed: false, gate_failures: ['passed 2 of 3 repeats (reducer all)', 'median score 2 is below --min-score 5'],
    });
  });

  it('a single evaluation is a run of one case; bless moves the baseline to a passed run', async () => {
    const single = await cli(['evaluate', '--task', 'task of solo', '--code', '# SCORE=8', '--num-evals', '1', '--label', 'solo', '--json']);
    expect(single.code, single.stderr).toBe(0);
    const result = JSON.parse(single.stdout) as { run_id: string; case_id: string; passed: boolean };
    expect(result).toMatchObject({ case_id: 'task of solo', passed: true });
    const detail = RunDetailResponse.parse(JSON.parse((await cli(['evaluations', 'show', result.run_id, '--json'])).stdout));
    expect(detail.run).toMatchObject({ label: 'solo', status: 'passed', blessed: false, summary: { cases: 1 } });
    const blessed = await cli(['evaluate', 'bless', result.run_id, '--json']);
    expect(blessed.code, blessed.stderr).toBe(0);
    expect(EvaluationRun.parse(JSON.parse(blessed.stdout))).toMatchObject({ id: result.run_id, blessed: true });
    const unknown = await cli(['evaluations', 'show', '000000000000000000']);
    expect(unknown.code).toBe(4);
  });
});
