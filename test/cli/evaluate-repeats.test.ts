import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { costUsd, DEFAULT_MODEL_PRICES } from '../../src/core/pricing.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { runCli } from '../support/cli.js';
import { useServerWithFakeLlm } from '../support/llm-server.js';

/**
 * `service evaluate --repeat/--reducer/--max-cost/--no-cache`: the rules are
 * docs/behavior.md "Evaluation repeats", "Judge cache" and "Evaluation cost". The real binary against a real server whose
 * provider is the fake one (OpenAI SDK, default model gpt-4o-mini at its shipped price). The
 * fake counts every chat call. Needs `npm run build` (dist/).
 */

const ctx = useServerWithFakeLlm('svc-cli-repeats-', {
  env: { SERVICE_RATE_LIMIT_EXPENSIVE: '10000', SERVICE_RATE_LIMIT_DEFAULT: '10000', SERVICE_RATE_LIMIT_PER_KEY: '10000' },
});
beforeEach(() => ctx.fake.reset());

const cli = (args: string[], env: Record<string, string> = {}) => runCli([...args, '--url', ctx.server.url], { env });
const USAGE = { input_tokens: 700, output_tokens: 40 };

function verdict(overall: number) {
  return reply.json({ task_alignment: overall, code_quality: overall, workspace_usage: overall, robustness: overall, overall, feedback: `Overall ${overall}.`, hardcoded: false }, { usage: USAGE });
}

/** A judge that disagrees with itself on FLAKY (8, 2, 8, 8, 2, 8, …) and always gives STEADY an 8. */
function disagreeingJudge(): void {
  let flakyCalls = 0;
  ctx.fake.script((call) => (call.prompt.includes('FLAKY') ? verdict([8, 2, 8][flakyCalls++ % 3]) : verdict(8)));
}

async function batchFile(name: string, rows: object[]): Promise<string> {
  const file = join(ctx.dir.path, name);
  await writeFile(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

function testcases(xml: string): { name: string; body: string }[] {
  return [...xml.matchAll(/<testcase name="([^"]*)"[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)].map((m) => ({ name: m[1], body: m[2] ?? '' }));
}

describe('service evaluate --repeat', () => {
  it('a judge that disagrees across repeats makes the case flaky; each reducer decides; a rerun is served from the repeats\' own cache slots', async () => {
    disagreeingJudge();
    const batch = await batchFile('repeats.jsonl', [{ id: 'steady', task: 'add', code: 'STEADY = 1' }, { id: 'wobbly', task: 'add', code: 'FLAKY = 1' }]);
    const junit = join(ctx.dir.path, 'repeats.xml');
    const summary = join(ctx.dir.path, 'repeats.md');
    const args = ['evaluate', '--batch', batch, '--num-evals', '1', '--repeat', '3', '--min-score', '5', '--json'];

    const all = await cli([...args, '--reducer', 'all', '--junit', junit], { GITHUB_STEP_SUMMARY: summary });
    expect(all.code).toBe(100);
    const first = JSON.parse(all.stdout);
    const [steady, wobbly] = first.cases;
    expect(steady).toMatchObject({ id: 'steady', repeats: 3, pass_rate: 1, flaky: false, repeat_scores: [8, 8, 8], gate_failures: [] });
    expect(wobbly).toMatchObject({ id: 'wobbly', repeats: 3, flaky: true, repeat_scores: [8, 2, 8], cache_hit: false });
    // Printed numbers are rounded to 4 decimals (core/output-numbers.ts).
    expect(wobbly.pass_rate).toBe(0.6667);
    expect(wobbly.gate_failures).toEqual(['passed 2 of 3 repeats (reducer all)', 'median score 2 is below --min-score 5']);
    // pass^3: steady passed all three (1), wobbly cannot pass three fresh repeats by its record (C(2,3) = 0).
    expect(first.summary).toMatchObject({ repeats: 3, reducer: 'all', pass_hat_k: 0.5, flaky: 1, cache_hits: 0, cache_misses: 6, passed: 1, gate_failed: 1 });
    expect(ctx.fake.chatRequests()).toHaveLength(6);

    const xml = await readFile(junit, 'utf8');
    const [, wobblyCase] = testcases(xml);
    expect(wobblyCase.body).toContain('<property name="repeats" value="3"/>');
    expect(wobblyCase.body).toContain('<property name="pass_rate" value="0.6667"/>');
    expect(wobblyCase.body).toContain('<property name="flaky" value="true"/>');
    expect(wobblyCase.body).toContain('<property name="repeat_scores" value="8 2 8"/>');
    expect(wobblyCase.body).toMatch(/<failure message="passed 2 of 3 repeats \(reducer all\); median score 2/);
    const md = await readFile(summary, 'utf8');
    expect(md).toContain('| case | median | variance | adversarial | pass rate | status |');
    expect(md).toMatch(/\| wobbly \| 8 \| 0 \| no \| 0\.6667 ⚠️ flaky \| fail: passed 2 of 3 repeats/);
    expect(md).toContain('pass^3 0.5, 1 flaky');
    expect(md).toMatch(/Judge cache: 0 hits, 6 misses\./);

    // Same cases, same judges: every repeat comes from its own cache slot, so the flakiness is kept and no call is made.
    ctx.fake.reset();
    disagreeingJudge();
    const majority = await cli([...args, '--reducer', 'majority']);
    expect(majority.code).toBe(0);
    const second = JSON.parse(majority.stdout);
    expect(second.cases[1]).toMatchObject({ flaky: true, repeat_scores: [8, 2, 8], cache_hit: true, gate_failures: [], cost_usd: 0 });
    expect(second.summary).toMatchObject({ reducer: 'majority', cache_hits: 6, cache_misses: 0, pass_hat_k: 0.5, cost_usd: 0 });
    expect(ctx.fake.chatRequests()).toHaveLength(0);

    // The text report ends with the repeats and the cost lines.
    const table = await cli([...args.filter((a) => a !== '--json'), '--reducer', 'majority', '--format', 'table']);
    expect(table.stdout).toMatch(/^\s*wobbly\s.*0\.6667 flaky\s+pass\s*$/m);
    expect(table.stdout).toContain('repeats 3 (reducer majority): pass^3 0.5, 1 flaky');
    expect(table.stdout).toContain('cost $0, tokens 0 in / 0 out; judge cache 6 hits, 0 misses');

    const strict = await cli([...args, '--reducer', 'min-rate:0.8']);
    expect(strict.code).toBe(100);
    expect(JSON.parse(strict.stdout).cases[1].gate_failures[0]).toBe('passed 2 of 3 repeats (reducer min-rate:0.8)');
    const lenient = await cli([...args, '--reducer', 'min-rate:0.6']);
    expect(lenient.code).toBe(0);

    // --no-cache judges every repeat again.
    const fresh = await cli([...args, '--no-cache']);
    expect(JSON.parse(fresh.stdout).summary).toMatchObject({ cache_hits: 0, cache_misses: 6 });
    expect(ctx.fake.chatRequests()).toHaveLength(6);
  });

  it('refuses a bad reducer or repeat count before any call', async () => {
    for (const bad of [['--reducer', 'most'], ['--reducer', 'min-rate:1.5'], ['--repeat', '0'], ['--repeat', '21'], ['--max-cost', '-1']]) {
      const res = await cli(['evaluate', '--code', 'x = 1', ...bad]);
      expect(res.code, bad.join(' ')).toBe(2);
    }
    expect(ctx.fake.chatRequests()).toHaveLength(0);
  });

  it('tokens and cost per case and per run are the fake provider\'s usage at the model\'s price', async () => {
    ctx.fake.script(() => verdict(7));
    const batch = await batchFile('cost.jsonl', [{ id: 'c1', code: 'COST_ONE = 1' }, { id: 'c2', code: 'COST_TWO = 2' }]);
    const res = await cli(['evaluate', '--batch', batch, '--num-evals', '2', '--json']);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    const perCase = { input: 2 * USAGE.input_tokens, output: 2 * USAGE.output_tokens };
    for (const c of out.cases) {
      expect(c.tokens).toEqual(perCase);
      expect(c.cost_usd).toBe(costUsd(perCase, DEFAULT_MODEL_PRICES['gpt-4o-mini']));
      expect(c.result.tokens).toEqual(perCase);
      expect(c.result.llm_calls).toBe(2);
      expect(c.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(out.summary.tokens).toEqual({ input: 4 * USAGE.input_tokens, output: 4 * USAGE.output_tokens });
    expect(out.summary.cost_usd).toBeCloseTo(2 * costUsd(perCase, DEFAULT_MODEL_PRICES['gpt-4o-mini']), 9);
  });
});

describe('service evaluate --max-cost', () => {
  it('stops before the budget would be passed and names the cases not evaluated', async () => {
    ctx.fake.script(() => verdict(7));
    const rows = Array.from({ length: 6 }, (_, i) => ({ id: `budget-${i + 1}`, task: 'sum a list', code: `BUDGET_${i + 1} = sum([1, 2, 3])` }));
    const batch = await batchFile('budget.jsonl', rows);
    const junit = join(ctx.dir.path, 'budget.xml');
    const budget = 0.002;
    const res = await cli(['evaluate', '--batch', batch, '--num-evals', '3', '--max-cost', String(budget), '--junit', junit, '--json']);
    expect(res.code).toBe(5);
    const out = JSON.parse(res.stdout);
    const evaluated = out.cases.filter((c: { not_evaluated: string | null }) => c.not_evaluated === null);
    const skipped = out.cases.filter((c: { not_evaluated: string | null }) => c.not_evaluated !== null);
    expect(evaluated.length).toBeGreaterThan(0);
    expect(skipped.length).toBeGreaterThan(0);
    // The run stops: the cases left out are the tail, in order, and nothing was spent on them.
    expect(out.summary.not_evaluated).toEqual(rows.slice(evaluated.length).map((r) => r.id));
    expect(ctx.fake.chatRequests()).toHaveLength(3 * evaluated.length);
    expect(out.summary.cost_usd).toBeLessThanOrEqual(budget);
    expect(out.summary.exit_code).toBe(5);
    expect(res.stderr).toMatch(/stopped: --max-cost \$0\.002 would be passed/);
    expect(res.stderr).toContain(`not evaluated: ${out.summary.not_evaluated.join(', ')}`);
    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(new RegExp(`<testsuite [^>]*skipped="${skipped.length}"`));
    expect(xml).toContain('<skipped message="not evaluated: --max-cost $0.002 would be passed');
  });

  it('a budget of 0 still serves cached cases and evaluates nothing new', async () => {
    ctx.fake.script(() => verdict(7));
    const batch = await batchFile('zero.jsonl', [{ id: 'z1', code: 'ZERO_ONE = 1' }]);
    expect((await cli(['evaluate', '--batch', batch, '--num-evals', '1', '--json'])).code).toBe(0);
    ctx.fake.reset();
    const cached = await cli(['evaluate', '--batch', batch, '--num-evals', '1', '--max-cost', '0', '--json']);
    expect(cached.code).toBe(0);
    expect(JSON.parse(cached.stdout).summary).toMatchObject({ cache_hits: 1, not_evaluated: [] });
    const fresh = await cli(['evaluate', '--code', 'ZERO_TWO = 2', '--num-evals', '1', '--max-cost', '0', '--json']);
    expect(fresh.code).toBe(5);
    expect(fresh.stderr).toMatch(/^not evaluated: --max-cost \$0 would be passed/);
    expect(ctx.fake.chatRequests()).toHaveLength(0);
  });
});
