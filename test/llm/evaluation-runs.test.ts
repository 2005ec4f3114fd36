import { afterEach, describe, expect, it } from 'vitest';
import { EvaluationRun, FinishRunResponse, RunDetailResponse, RunListResponse } from '../../src/contracts/evaluations.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { ManualClock, type TestServer } from '../api/helpers.js';
import { pollJob } from '../api/jobs-support.js';
import { loadConfig } from '../../src/config/index.js';
import { startServer } from '../api/helpers.js';
import { llmEnv, makeLlm, scores } from './helpers.js';
import { applyRetention } from '../../src/services/governance-retention.js';

/**
 * docs/behavior.md "Evaluation runs" through the API with the fake provider: what is recorded
 * for synchronous, grouped and asynchronous evaluations, what is refused before any LLM call,
 * failures kept as cases, and retention.
 */
const fake = await useFakeLlm();
let t: TestServer | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const start = async (clock?: ManualClock) => {
  const env = llmEnv(fake, 'provider_a');
  t = await startServer(env, { llm: makeLlm(loadConfig(env)), ...(clock ? { clock } : {}) });
  return t;
};
const evaluatorsSay = (overall: number) => fake.script(() => reply.json(scores(overall)));

describe('evaluation runs (API)', () => {
  it('a synchronous evaluation without run_id is a run of one case; its answer is unchanged', async () => {
    const server = await start();
    evaluatorsSay(7);
    const res = await server.call('POST', '/v1/evaluate', { task: 'Add two numbers', code: 'def add(a, b): return a + b', num_evals: 2 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty('run_id');
    const { runs } = RunListResponse.parse((await server.call('GET', '/v1/evaluations')).json());
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'passed', label: null, summary: { cases: 1, passed: 1, pass_rate: 1 }, judge: { provider: 'openai', evaluators: 2 } });
    const detail = RunDetailResponse.parse((await server.call('GET', `/v1/evaluations/${runs[0].id}`)).json());
    expect(detail.cases[0]).toMatchObject({ case_id: 'Add two numbers', task: 'Add two numbers', median: 7, passed: true, output: null });
  });

  it('groups cases into a run; unknown and finished runs are refused before any LLM call', async () => {
    const server = await start();
    evaluatorsSay(8);
    const unknown = await server.call('POST', '/v1/evaluate', { code: 'x', run_id: '000000000000000000' });
    expect(unknown.statusCode).toBe(404);
    expect(fake.chatRequests()).toHaveLength(0);

    const run = EvaluationRun.parse((await server.call('POST', '/v1/evaluations', { label: 'main', num_evals: 1, gate: { min_score: 9 } })).json());
    expect(run.status).toBe('running');
    const first = await server.call('POST', '/v1/evaluate', { code: 'x = 1', num_evals: 1, run_id: run.id, case_id: 'one' });
    expect(first.json()).toMatchObject({ run_id: run.id, case_id: 'one', passed: false, gate_failures: ['median score 8 is below --min-score 9'] });
    // The same case again replaces it; as a job it lands in the same run.
    const job = await server.call('POST', '/v1/evaluate', { code: 'x = 2', num_evals: 1, run_id: run.id, case_id: 'one' }, { prefer: 'respond-async' });
    expect(job.statusCode).toBe(202);
    expect((await pollJob(server, job.json().job_id)).status).toBe('completed');
    const running = RunDetailResponse.parse((await server.call('GET', `/v1/evaluations/${run.id}`)).json());
    expect(running.cases.map((c) => [c.case_id, c.code])).toEqual([['one', 'x = 2']]);
    expect(running.run.summary).toMatchObject({ cases: 1, failed: 1 });

    const finished = FinishRunResponse.parse((await server.call('POST', `/v1/evaluations/${run.id}/finish`, { bless_on_pass: true })).json());
    expect(finished.run).toMatchObject({ status: 'failed', blessed: false, comparison: null });
    const calls = fake.chatRequests().length;
    expect((await server.call('POST', '/v1/evaluate', { code: 'x', run_id: run.id })).statusCode).toBe(409);
    expect((await server.call('POST', `/v1/evaluations/${run.id}/finish`, {})).statusCode).toBe(409);
    expect((await server.call('POST', `/v1/evaluations/${run.id}/bless`)).statusCode).toBe(409);
    expect(fake.chatRequests()).toHaveLength(calls);
  });

  it('repeats of a case (sample > 0) join it under the gate\'s reducer; the answer echoes the repeat\'s own verdict', async () => {
    const server = await start();
    expect((await server.call('POST', '/v1/evaluations', { gate: { reducer: 'most' } })).statusCode).toBe(422);
    const run = EvaluationRun.parse((await server.call('POST', '/v1/evaluations', { num_evals: 1, gate: { min_score: 5, reducer: 'min-rate:0.50' } })).json());
    expect(run.gate.reducer).toBe('min-rate:0.5');
    const repeat = async (sample: number, overall: number, code = 'x = 1') => {
      evaluatorsSay(overall);
      return (await server.call('POST', '/v1/evaluate', { code, num_evals: 1, run_id: run.id, case_id: 'c', sample })).json();
    };
    expect(await repeat(0, 8)).toMatchObject({ passed: true, gate_failures: [] });
    // This repeat fails its own gate; the case (1 of 2, min-rate 0.5) still passes.
    expect(await repeat(1, 2)).toMatchObject({ passed: false, gate_failures: ['median score 2 is below --min-score 5'] });
    let detail = RunDetailResponse.parse((await server.call('GET', `/v1/evaluations/${run.id}`)).json());
    expect(detail.cases).toHaveLength(1);
    expect(detail.cases[0]).toMatchObject({ repeats: 2, pass_rate: 0.5, flaky: true, passed: true, gate_failures: [], median: 8, cache_hit: false, cache_hits: 0 });
    expect(detail.run.summary).toMatchObject({ cases: 1, passed: 1, flaky: 1, pass_hat_k: 0, cache_misses: 2 });
    await repeat(2, 3);
    detail = RunDetailResponse.parse((await server.call('GET', `/v1/evaluations/${run.id}`)).json());
    expect(detail.cases[0]).toMatchObject({
      repeats: 3, flaky: true, passed: false,
      gate_failures: ['passed 1 of 3 repeats (reducer min-rate:0.5)', 'median score 2 is below --min-score 5', 'median score 3 is below --min-score 5'],
    });
    // A first repeat (sample 0) again starts the case afresh (here with changed code: a cache miss).
    await repeat(0, 9, 'x = 2');
    detail = RunDetailResponse.parse((await server.call('GET', `/v1/evaluations/${run.id}`)).json());
    expect(detail.cases[0]).toMatchObject({ repeats: 1, pass_rate: null, flaky: null, passed: true, median: 9 });
  });

  it('every evaluator failing is kept as a failed case; a case the client could not send counts as failed', async () => {
    const server = await start();
    fake.script(() => reply.error(400));
    const run = EvaluationRun.parse((await server.call('POST', '/v1/evaluations', { num_evals: 1 })).json());
    const res = await server.call('POST', '/v1/evaluate', { code: 'x', num_evals: 1, run_id: run.id, case_id: 'broken' });
    expect(res.statusCode).toBe(503);
    const finished = FinishRunResponse.parse((await server.call('POST', `/v1/evaluations/${run.id}/finish`, { not_evaluated: ['broken', 'never-sent'] })).json());
    expect(finished.run).toMatchObject({ status: 'failed', summary: { cases: 2, failed: 2, passed: 0 } });
    const detail = RunDetailResponse.parse((await server.call('GET', `/v1/evaluations/${run.id}`)).json());
    expect(detail.cases.map((c) => [c.case_id, c.passed, c.error !== null])).toEqual([['broken', false, true], ['never-sent', false, true]]);
    expect(detail.cases[0].error).toMatch(/evaluators failed/);
  });

  it('bless needs a label; pages with a cursor; a foreign cursor is 422', async () => {
    const server = await start();
    evaluatorsSay(9);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const run = EvaluationRun.parse((await server.call('POST', '/v1/evaluations', { num_evals: 1 })).json());
      await server.call('POST', '/v1/evaluate', { code: `x = ${i}`, num_evals: 1, run_id: run.id });
      expect(FinishRunResponse.parse((await server.call('POST', `/v1/evaluations/${run.id}/finish`, {})).json()).run.status).toBe('passed');
      ids.push(run.id);
    }
    expect((await server.call('POST', `/v1/evaluations/${ids[0]}/bless`)).statusCode).toBe(422);
    const page = RunListResponse.parse((await server.call('GET', '/v1/evaluations?limit=2')).json());
    expect(page.runs.map((r) => r.id)).toEqual([ids[2], ids[1]]);
    const rest = RunListResponse.parse((await server.call('GET', `/v1/evaluations?limit=2&cursor=${page.next_cursor}`)).json());
    expect(rest).toEqual({ runs: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
    expect((await server.call('GET', '/v1/evaluations?cursor=not-a-cursor')).statusCode).toBe(422);
    expect((await server.call('GET', '/v1/evaluations?status=broken')).statusCode).toBe(422);
  });

  it('retention deletes runs past the policy with their cases, keeping a label\'s baseline', async () => {
    const clock = new ManualClock(new Date('2025-01-01T00:00:00.000Z'));
    const server = await start(clock);
    evaluatorsSay(9);
    const runOf = async (label: string, bless: boolean) => {
      const run = EvaluationRun.parse((await server.call('POST', '/v1/evaluations', { label, num_evals: 1 })).json());
      await server.call('POST', '/v1/evaluate', { code: 'x', num_evals: 1, run_id: run.id });
      await server.call('POST', `/v1/evaluations/${run.id}/finish`, { bless_on_pass: bless });
      return run.id;
    };
    const baseline = await runOf('main', true);
    const old = await runOf('main', false);
    clock.set('2025-03-01T00:00:00.000Z');
    const fresh = await runOf('main', false);
    // Retention is set and applied by an admin in DB auth mode; the service is called directly here.
    const scope = { tenant_id: 'default', project_id: 'default' };
    await server.app.deps.storage.projects.setProjectRetention(scope, 30, clock.now().toISOString());
    expect(await applyRetention(server.app.deps, scope, { dry_run: true })).toEqual({ purged_count: 0, dry_run: true });
    expect(RunListResponse.parse((await server.call('GET', '/v1/evaluations')).json()).runs).toHaveLength(3);
    await applyRetention(server.app.deps, scope, { dry_run: false });
    const left = RunListResponse.parse((await server.call('GET', '/v1/evaluations')).json()).runs.map((r) => r.id);
    expect(left).toEqual([fresh, baseline]);
    expect((await server.call('GET', `/v1/evaluations/${old}`)).statusCode).toBe(404);
    const audit = await server.app.deps.storage.audit.list({ kind: 'RETENTION_APPLIED', limit: 5 });
    expect(audit.map((e) => e.detail)).toEqual([expect.objectContaining({ evaluation_runs_purged: 1, dry_run: false }), expect.objectContaining({ evaluation_runs_purged: 1, dry_run: true })]);
  });
});
