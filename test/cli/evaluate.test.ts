import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ComposeResponse, EvaluateResponse, FeedbackResponse } from '../../src/contracts/llm.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { runCli, runCliInTty } from '../support/cli.js';
import { useServerWithFakeLlm } from '../support/llm-server.js';

/**
 * `service evaluate` as CI runs it: the real binary against a real server whose LLM provider
 * is the fake one (provider_a through the OpenAI SDK). Needs `npm run build` (dist/).
 */

const ctx = useServerWithFakeLlm('svc-cli-eval-', {
  env: {
    // Many evaluations from one IP within a minute; the limits are not what this file tests.
    SERVICE_RATE_LIMIT_EXPENSIVE: '10000',
    SERVICE_RATE_LIMIT_DEFAULT: '10000',
    SERVICE_RATE_LIMIT_PER_KEY: '10000',
  },
});
beforeEach(() => ctx.fake.reset());

/** Every evaluator call answers `overall` (and `hardcoded`). */
function evaluatorsSay(overall: number, hardcoded = false): void {
  ctx.fake.script(() => reply.json({
    task_alignment: overall, code_quality: overall, workspace_usage: overall, robustness: overall, overall,
    feedback: `Overall ${overall}: add input validation.`, hardcoded,
  }));
}

/** Evaluator score chosen by a marker in the fenced code. */
function evaluatorsByCode(scores: Record<string, number>, delayMs = 0): void {
  ctx.fake.script((call) => {
    const marker = Object.keys(scores).find((m) => call.prompt.includes(m));
    const overall = marker === undefined ? 5 : scores[marker];
    return reply.json({ task_alignment: overall, code_quality: overall, workspace_usage: overall, robustness: overall, overall, feedback: 'Fine.', hardcoded: false }, { delayMs });
  });
}

const cli = (args: string[], input?: string) => runCli([...args, '--url', ctx.server.url], { input });

describe('service evaluate', () => {
  it('prints the spec result with --json and exits 0 when the gate passes', async () => {
    evaluatorsSay(7);
    const res = await cli(['evaluate', '--task', 'add numbers', '--code', 'def add(a, b): return a + b', '--num-evals', '2', '--min-score', '6.5', '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const result = EvaluateResponse.parse(JSON.parse(res.stdout));
    expect(result.median_score).toBe(7);
    expect(result.scores).toHaveLength(2);
    expect(ctx.fake.chatRequests()).toHaveLength(2);
  });

  it('exits 100 when the median is below --min-score', async () => {
    evaluatorsSay(4);
    const res = await cli(['evaluate', '--task', 'add numbers', '--code', 'def add(a, b): return a - b', '--min-score', '6', '--json']);
    expect(res.code).toBe(100);
    expect(JSON.parse(res.stdout).median_score).toBe(4);
    expect(res.stderr).toMatch(/below --min-score 6/);
  });

  it('exits 100 with --fail-on-adversarial and --fail-on-high-variance, 0 without them', async () => {
    evaluatorsSay(9, true);
    const args = ['evaluate', '--task', 'count rows', '--code', 'print(3)', '--json'];
    expect((await cli(args)).code).toBe(0);
    expect((await cli([...args, '--fail-on-adversarial'])).code).toBe(100);

    let n = 0;
    ctx.fake.script(() => {
      const overall = [1, 9, 5][n++ % 3];
      return reply.json({ task_alignment: 5, code_quality: 5, workspace_usage: 5, robustness: 5, overall, feedback: 'x.', hardcoded: false });
    });
    expect((await cli([...args, '--fail-on-high-variance'])).code).toBe(100);
  });

  it('reads --code from a file and --output from stdin', async () => {
    evaluatorsSay(8);
    const codeFile = join(ctx.dir.path, 'solution.py');
    await writeFile(codeFile, 'def solve():\n    return 42\n');
    const res = await cli(['evaluate', '--task', 'solve', '--code', `@${codeFile}`, '--output', '-', '--num-evals', '1'], 'forty-two\n');
    expect(res.code).toBe(0);
    const { prompt } = ctx.fake.chatRequests()[0].call!;
    expect(prompt).toContain('<code>\ndef solve():\n    return 42\n\n</code>');
    expect(prompt).toContain('<output>\nforty-two\n</output>');
  });

  it('exits 1 with the detail on stderr when the LLM provider fails', async () => {
    ctx.fake.script(() => reply.error(400, { message: 'model not found' }));
    const res = await cli(['evaluate', '--task', 't', '--code', 'x = 1', '--num-evals', '1', '--min-score', '5']);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^error: .*evaluators failed/m);
  });

  it('exits 2 on bad usage before calling the server', async () => {
    expect((await cli(['evaluate', '--task', 't'])).code).toBe(2);
    expect((await cli(['evaluate', '--code', 'x', '--num-evals', '11'])).code).toBe(2);
    expect(ctx.fake.chatRequests()).toHaveLength(0);
  });

  it('writes a JUnit report with a failure element when gated', async () => {
    evaluatorsSay(3);
    const junit = join(ctx.dir.path, 'single.xml');
    const res = await cli(['evaluate', '--task', 'sort <items> & "dedupe"', '--code', 'x = 1', '--num-evals', '1', '--min-score', '5', '--junit', junit]);
    expect(res.code).toBe(100);
    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites [^>]*tests="1" failures="1" errors="0"/);
    const cases = testcases(xml);
    expect(cases).toHaveLength(1);
    expect(cases[0].name).toBe('sort &lt;items&gt; &amp; &quot;dedupe&quot;');
    expect(cases[0].body).toMatch(/<failure message="median score 3 is below --min-score 5" type="quality-gate">/);
    expectBalanced(xml);
  });
});

describe('service evaluate --batch', () => {
  it('evaluates every JSONL line with bounded concurrency and one exit code', async () => {
    // Slow replies, so more than two cases would overlap at the provider if the CLI let them.
    evaluatorsByCode({ GOOD_A: 8, GOOD_B: 9, BAD_C: 2, GOOD_D: 7 }, 30);
    const batch = join(ctx.dir.path, 'cases.jsonl');
    const lines = [
      { name: 'case-a', task: 'a', code: 'GOOD_A = 1' },
      { task: 'b', code: 'GOOD_B = 1', output: 'ok' },
      { name: 'case-c', task: 'c', code: 'BAD_C = 1' },
      '',
      { name: 'case-d', code: 'GOOD_D = 1' },
    ];
    await writeFile(batch, lines.map((l) => (l === '' ? '' : JSON.stringify(l))).join('\n') + '\n');
    const junit = join(ctx.dir.path, 'batch.xml');
    const res = await cli(['evaluate', '--batch', batch, '--num-evals', '1', '--concurrency', '2', '--min-score', '5', '--junit', junit, '--json']);
    expect(res.code).toBe(100);
    const out = JSON.parse(res.stdout);
    expect(out.summary).toEqual({ cases: 4, passed: 3, gate_failed: 1, errors: 0, exit_code: 100 });
    expect(out.cases.map((c: { name: string }) => c.name)).toEqual(['case-a', 'line 2: b', 'case-c', 'case-d']);
    expect(out.cases[2].gate_failures).toEqual(['median score 2 is below --min-score 5']);
    expect(ctx.fake.chatRequests()).toHaveLength(4);
    expect(ctx.fake.maxInFlight).toBeLessThanOrEqual(2);

    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(/<testsuites [^>]*tests="4" failures="1" errors="0"/);
    const cases = testcases(xml);
    expect(cases.map((c) => c.name)).toEqual(['case-a', 'line 2: b', 'case-c', 'case-d']);
    expect(cases.filter((c) => c.body.includes('<failure'))).toHaveLength(1);
    expectBalanced(xml);
  });

  it('keeps the provider at one call at a time with --concurrency 1', async () => {
    ctx.fake.script(() => reply.json({ task_alignment: 7, code_quality: 7, workspace_usage: 7, robustness: 7, overall: 7, feedback: 'ok.', hardcoded: false }, { delayMs: 30 }));
    const batch = join(ctx.dir.path, 'serial.jsonl');
    await writeFile(batch, [1, 2, 3].map((i) => JSON.stringify({ code: `x = ${i}` })).join('\n'));
    const res = await cli(['evaluate', '--batch', batch, '--num-evals', '1', '--concurrency', '1', '--json']);
    expect(res.code).toBe(0);
    expect(ctx.fake.chatRequests()).toHaveLength(3);
    expect(ctx.fake.maxInFlight).toBe(1);
  });

  it('reports errors per case, and errors win over gate failures for the exit code', async () => {
    ctx.fake.script((call) => (call.prompt.includes('BROKEN') ? reply.error(400) : reply.json({ task_alignment: 2, code_quality: 2, workspace_usage: 2, robustness: 2, overall: 2, feedback: 'bad.', hardcoded: false })));
    const batch = join(ctx.dir.path, 'errors.jsonl');
    await writeFile(batch, [JSON.stringify({ name: 'ok', code: 'x = 1' }), JSON.stringify({ name: 'broken', code: 'BROKEN = 1' })].join('\n'));
    const junit = join(ctx.dir.path, 'errors.xml');
    const res = await cli(['evaluate', '--batch', batch, '--num-evals', '1', '--min-score', '5', '--junit', junit, '--json']);
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout).summary).toMatchObject({ passed: 0, gate_failed: 1, errors: 1, exit_code: 1 });
    // --json: the failed case is a JSON error on stderr, named by its case.
    expect(JSON.parse(res.stderr)).toMatchObject({ error: { exit_code: 1, status: 503 } });
    expect((JSON.parse(res.stderr) as { error: { message: string } }).error.message).toMatch(/^broken: /);
    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(/tests="2" failures="1" errors="1"/);
    expect(testcases(xml)[1].body).toMatch(/<error message="[^"]*" type="http-503">/);
  });

  it('draws a progress bar and a summary table on a terminal', async () => {
    evaluatorsByCode({ GOOD_A: 8, BAD_C: 2 });
    const batch = join(ctx.dir.path, 'tty.jsonl');
    await writeFile(batch, [JSON.stringify({ name: 'first', code: 'GOOD_A' }), JSON.stringify({ name: 'second', code: 'BAD_C' })].join('\n'));
    const res = await runCliInTty(['evaluate', '--batch', batch, '--num-evals', '1', '--min-score', '5', '--url', ctx.server.url]);
    expect(res.code).toBe(100);
    // eslint-disable-next-line no-control-regex
    const plain = res.output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    expect(plain).toMatch(/evaluating \[[#-]{20}\] \d\/2/);
    expect(plain).toMatch(/case\s+median\s+variance\s+adversarial\s+status/);
    expect(plain).toMatch(/second\s+2\s+0\s+no\s+fail: median score 2 is below --min-score 5/);
    expect(plain).toContain('2 cases: 1 passed, 1 failed the gate, 0 errors');
  });

  it('rejects a malformed batch file with exit 2 naming the line', async () => {
    const batch = join(ctx.dir.path, 'bad.jsonl');
    await writeFile(batch, `${JSON.stringify({ code: 'x' })}\n{"task": "no code"}\n`);
    const res = await cli(['evaluate', '--batch', batch]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/line 2: "code" must be a non-empty string/);
    expect(ctx.fake.chatRequests()).toHaveLength(0);
  });
});

describe('service evaluate: numbers as printed', () => {
  it('rounds float noise at the output (JSON, table, JUnit, step summary), not the values', async () => {
    // Overall 0.1 and 0.2: the median is 0.15000000000000002 in floating point.
    let n = 0;
    ctx.fake.script(() => {
      const overall = n++ % 2 === 0 ? 0.1 : 0.2;
      return reply.json({ task_alignment: overall, code_quality: overall, workspace_usage: overall, robustness: overall, overall, feedback: 'ok.', hardcoded: false });
    });
    expect((0.1 + 0.2) / 2).not.toBe(0.15);
    const junit = join(ctx.dir.path, 'noise.xml');
    const summary = join(ctx.dir.path, 'summary.md');
    const res = await runCli(['evaluate', '--task', 'add', '--code', 'x = 1', '--num-evals', '2', '--min-score', '1', '--junit', junit, '--json', '--url', ctx.server.url], { env: { GITHUB_STEP_SUMMARY: summary } });
    expect(res.code).toBe(100);
    expect(res.stdout).not.toMatch(/0\.1500000|0\.0025000/);
    expect(JSON.parse(res.stdout)).toMatchObject({ median_score: 0.15, variance: 0.0025 });
    expect(res.stderr).toContain('median score 0.15 is below --min-score 1');
    const xml = await readFile(junit, 'utf8');
    expect(xml).toContain('<property name="median_score" value="0.15"/>');
    expect(xml).toContain('median_score: 0.15\n');
    expect(xml).not.toMatch(/0\.1500000/);
    expect(await readFile(summary, 'utf8')).toMatch(/\| 0\.15 \| 0\.0025 \|/);
    const table = await runCli(['evaluate', '--task', 'add', '--code', 'x = 1', '--num-evals', '2', '--format', 'table', '--url', ctx.server.url]);
    expect(table.stdout).toMatch(/median score 0\.15 {2}\(variance 0\.0025;/);
  });
});

describe('service evaluate: blank tasks and case ids', () => {
  it('a blank --task exits 2 before any LLM call', async () => {
    for (const task of ['', '   ']) {
      const res = await cli(['evaluate', '--task', task, '--code', 'x = 1', '--json']);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/--task must not be blank/);
    }
    const piped = await cli(['evaluate', '--task', '-', '--code', 'x = 1'], ' \n\t\n');
    expect(piped.code).toBe(2);
    expect(ctx.fake.chatRequests()).toHaveLength(0);
  });

  it('a batch line with a blank task exits 2 naming the line, before any LLM call', async () => {
    const batch = join(ctx.dir.path, 'blank.jsonl');
    await writeFile(batch, `${JSON.stringify({ task: 'add', code: 'x = 1' })}\n${JSON.stringify({ task: ' \t', code: 'x = 2' })}\n`);
    const res = await cli(['evaluate', '--batch', batch, '--num-evals', '1']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/line 2: "task" must not be blank/);
    expect(ctx.fake.chatRequests()).toHaveLength(0);
  });

  it('--batch names cases by `id` like the other batches, `name` still accepted', async () => {
    evaluatorsSay(8);
    const batch = join(ctx.dir.path, 'ids.jsonl');
    await writeFile(batch, [
      JSON.stringify({ id: 'case-1', task: 'a', code: 'x = 1' }),
      JSON.stringify({ id: 7, code: 'x = 2' }),
      JSON.stringify({ name: 'legacy', code: 'x = 3' }),
      JSON.stringify({ code: 'x = 4' }),
    ].join('\n'));
    const junit = join(ctx.dir.path, 'ids.xml');
    const res = await cli(['evaluate', '--batch', batch, '--num-evals', '1', '--junit', junit, '--json']);
    expect(res.code).toBe(0);
    const cases = JSON.parse(res.stdout).cases as { id?: string; name: string }[];
    expect(cases.map((c) => [c.id, c.name])).toEqual([['case-1', 'case-1'], ['7', '7'], ['legacy', 'legacy'], [undefined, 'line 4']]);
    expect(testcases(await readFile(junit, 'utf8')).map((c) => c.name)).toEqual(['case-1', '7', 'legacy', 'line 4']);

    await writeFile(batch, JSON.stringify({ id: 'a', name: 'b', code: 'x = 1' }));
    const both = await cli(['evaluate', '--batch', batch]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/line 1: give "id" or its alias "name", not both/);
  });
});

describe('service compose / feedback', () => {
  it('compose --json prints the pipeline', async () => {
    ctx.fake.script(() => reply.json({ stages: [
      { name: 'load', task: 'load data.csv', reads: ['data.csv'], writes: ['rows.json'] },
      { name: 'sum', task: 'sum rows', reads: ['rows.json'], writes: ['total.txt'] },
    ] }));
    const res = await cli(['compose', 'Sum the values in data.csv', '--json']);
    expect(res.code).toBe(0);
    const pipeline = ComposeResponse.parse(JSON.parse(res.stdout));
    expect(pipeline.valid).toBe(true);
    expect(pipeline.stages).toHaveLength(2);
  });

  it('feedback --json lists recurring issues recorded by evaluate', async () => {
    ctx.fake.script(() => reply.json({ task_alignment: 5, code_quality: 5, workspace_usage: 5, robustness: 5, overall: 5, feedback: 'Close the file handle after reading the report.', hardcoded: false }));
    await cli(['evaluate', '--task', 'read report', '--code', 'open("r").read()', '--num-evals', '2', '--json']);
    await cli(['evaluate', '--task', 'read report', '--code', 'open("r").read()', '--num-evals', '1', '--json']);
    const res = await cli(['feedback', '--json']);
    expect(res.code).toBe(0);
    const listed = FeedbackResponse.parse(JSON.parse(res.stdout));
    expect(listed.feedback.find((f) => f.text === 'Close the file handle after reading the report.')?.count).toBe(2);
  });
});

/** The <testcase> elements of a JUnit report: name attribute and inner XML. */
function testcases(xml: string): { name: string; body: string }[] {
  return [...xml.matchAll(/<testcase name="([^"]*)"[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)].map((m) => ({ name: m[1], body: m[2] ?? '' }));
}

/** Every opened element is closed in order (a small well-formedness check). */
function expectBalanced(xml: string): void {
  const stack: string[] = [];
  for (const m of xml.replace(/<\?xml[^>]*\?>/, '').matchAll(/<(\/?)([A-Za-z-]+)[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = m;
    if (selfClosing) continue;
    if (closing) expect(stack.pop()).toBe(name);
    else stack.push(name);
  }
  expect(stack).toEqual([]);
  // No raw `<` or `&` outside markup: text content is escaped.
  expect(xml.replace(/<[^>]*>/g, '')).not.toMatch(/<|&(?!(amp|lt|gt|quot|apos);)/);
}

describe('service evaluate --recall-id (docs/behavior.md "Outcomes")', () => {
  const TASK = 'Add two numbers and return the sum';
  async function learnedAndRecalled(): Promise<{ key: string; recallId: string }> {
    const learned = await cli(['learn', '--task', TASK, '--code', 'def add(a, b): return a + b', '--eval-score', '8', '--json']);
    const key = (JSON.parse(learned.stdout) as { pattern_key: string }).pattern_key;
    const recalled = await cli(['recall', TASK, '--json']);
    return { key, recallId: (JSON.parse(recalled.stdout) as { recall_id: string }).recall_id };
  }
  const outcomesOf = async (key: string) =>
    ((await (await fetch(`${ctx.server.url}/v1/patterns/${encodeURIComponent(key)}/outcomes`)).json()) as { outcomes: Record<string, unknown>[] }).outcomes;

  it('reports the gate\'s verdict as the outcome (source evaluator, score the median)', async () => {
    const { key, recallId } = await learnedAndRecalled();
    evaluatorsSay(4);
    const failed = await cli(['evaluate', '--task', TASK, '--code', 'def add(a, b): return a - b', '--pattern-key', key, '--recall-id', recallId, '--min-score', '6', '--json']);
    expect(failed.code).toBe(100);
    expect((await outcomesOf(key))[0]).toMatchObject({ recall_id: recallId, passed: false, score: 4, source: 'evaluator' });
    expect(String((await outcomesOf(key))[0].detail)).toContain('below --min-score 6');

    evaluatorsSay(8);
    const passed = await cli(['evaluate', '--task', TASK, '--code', 'def add(a, b): return a + b', '--pattern-key', key, '--recall-id', recallId, '--json']);
    expect(passed.code, passed.stderr).toBe(0);
    // The same recall and pattern: the report replaced; without gate flags a median of 5 or more passes.
    expect(await outcomesOf(key)).toMatchObject([{ recall_id: recallId, passed: true, score: 8, detail: null, source: 'evaluator' }]);
  });

  it('needs --pattern-key and takes no --batch', async () => {
    const noKey = await cli(['evaluate', '--code', 'x = 1', '--recall-id', 'abc']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('--recall-id needs --pattern-key');
  });
});
