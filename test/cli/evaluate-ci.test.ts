import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../fixtures/fake-llm/server.js';
import { runCli } from '../support/cli.js';
import { useServerWithFakeLlm } from '../support/llm-server.js';

/**
 * `service evaluate` in a CI job: flags checked before any LLM call, JUnit <properties>,
 * the GITHUB_STEP_SUMMARY Markdown, --format and JSON errors.
 */
const ctx = useServerWithFakeLlm('svc-cli-eval-ci-', { env: { SERVICE_RATE_LIMIT_EXPENSIVE: '10000', SERVICE_RATE_LIMIT_DEFAULT: '10000' } });
beforeEach(() => {
  ctx.fake.reset();
  ctx.fake.script((call) => {
    const overall = call.prompt.includes('GOOD') ? 9 : 4;
    return reply.json({ task_alignment: overall, code_quality: overall, workspace_usage: overall, robustness: overall, overall, feedback: 'Fine.', hardcoded: false });
  });
});

const cli = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
  runCli([...args, '--url', ctx.server.url], opts);

describe('evaluate in CI', () => {
  it('--min-score 11 and an unwritable --junit path fail with exit 2 before any LLM call', async () => {
    const bad = await cli(['evaluate', '--code', 'x = 1', '--min-score', '11']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--min-score.*expected a number from 0 to 10/);
    const blocker = join(ctx.dir.path, 'a-file');
    await writeFile(blocker, 'not a folder');
    const junit = await cli(['evaluate', '--code', 'x = 1', '--junit', join(blocker, 'report.xml')]);
    expect(junit.code).toBe(2);
    expect(junit.stderr).toMatch(/cannot write the --junit file/);
    expect(ctx.fake.chatRequests()).toHaveLength(0);
  });

  it('creates the --junit folder; test cases carry scores and variance as <properties>; the step summary is Markdown', async () => {
    const junit = join(ctx.dir.path, 'reports', 'nested', 'eval.xml');
    const summary = join(ctx.dir.path, 'summary.md');
    await writeFile(summary, '# earlier step\n');
    const cases = [{ name: 'good one', code: '# GOOD' }, { name: 'weak one', code: '# meh' }].map((c) => JSON.stringify(c)).join('\n');
    const res = await cli(['evaluate', '--batch', '-', '--num-evals', '2', '--min-score', '7', '--junit', junit], {
      input: cases, env: { GITHUB_STEP_SUMMARY: summary },
    });
    expect(res.code).toBe(100);
    const xml = await readFile(junit, 'utf8');
    const good = /<testcase name="good one"[\s\S]*?<\/testcase>/.exec(xml)![0];
    expect(good).toContain('<property name="median_score" value="9"/>');
    expect(good).toContain('<property name="variance" value="0"/>');
    expect(good).toContain('<property name="evaluator_2_overall" value="9"/>');
    expect(good.indexOf('<properties>')).toBeLessThan(good.indexOf('<system-out>'));
    const weak = /<testcase name="weak one"[\s\S]*?<\/testcase>/.exec(xml)![0];
    expect(weak).toMatch(/<properties>[\s\S]*<\/properties>\s*<failure/);

    const md = await readFile(summary, 'utf8');
    expect(md.startsWith('# earlier step\n')).toBe(true);
    expect(md).toContain('### ❌ service evaluate: 1 of 2 passed');
    expect(md).toContain('| good one | 9 | 0 | no | pass |');
    expect(md).toMatch(/\| weak one \| 4 \| 0 \| no \| fail: median score 4 is below --min-score 7 \|/);
  });

  it('--format table prints the table even when piped; --format json on a pipe is JSON', async () => {
    const table = await cli(['evaluate', '--code', '# GOOD', '--num-evals', '1', '--format', 'table']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^median score 9/);
    const json = await cli(['evaluate', '--code', '# GOOD', '--num-evals', '1', '--format', 'json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ median_score: 9 });
  });
});

describe('errors for scripts', () => {
  it('with --json the error on stderr is one JSON object; validation errors name the flag', async () => {
    const res = await cli(['recall', 'anything', '--limit', '51', '--json']);
    expect(res.code).toBe(2);
    const { error } = JSON.parse(res.stderr) as { error: { message: string; status: number; exit_code: number } };
    expect(error).toMatchObject({ status: 422, exit_code: 2 });
    expect(error.message).toMatch(/^invalid --limit: /);
    const human = await cli(['recall', 'anything', '--limit', '51']);
    expect(human.stderr).toMatch(/^error: invalid --limit: /);
  });

  it('evaluate --json prints its failure as one JSON object on stderr, a batch one per failed case', async () => {
    ctx.fake.script(() => reply.error(400));
    const res = await cli(['evaluate', '--code', 'x = 1', '--num-evals', '1', '--json']);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    const { error } = JSON.parse(res.stderr) as { error: { message: string; status: number; exit_code: number } };
    expect(error).toMatchObject({ status: 503, exit_code: 1 });
    expect(error.message).toMatch(/evaluator/);

    const batch = await cli(['evaluate', '--batch', '-', '--num-evals', '1', '--json'], {
      input: [JSON.stringify({ name: 'one', code: 'a' }), JSON.stringify({ name: 'two', code: 'b' })].join('\n'),
    });
    expect(batch.code).toBe(1);
    const lines = batch.stderr.trim().split('\n').map((l) => JSON.parse(l) as { error: { message: string; exit_code: number } });
    expect(lines.map((l) => l.error.message.split(':')[0]).sort()).toEqual(['one', 'two']);
    expect(lines.every((l) => l.error.exit_code === 1)).toBe(true);
  });

  it('hints name CLI commands, not HTTP routes', async () => {
    const res = await cli(['analytics', 'get', 'weekly']);
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('hint: compute it first: `service analytics rollup <window>`');
  });
});
