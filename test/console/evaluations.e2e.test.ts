/**
 * The console's Evaluations screens end to end: a real `service serve` (dev mode, JSON storage)
 * whose judges are the fake LLM server behind the real OpenAI client, and three evaluation runs
 * as CI records them: a baseline through the API (blessed), the next run through the CLI
 * (`service evaluate --batch --baseline main --markdown`: one case gets worse, one is new, one
 * went missing), and a single evaluation, which is a run of its own. Driven by Debian's
 * headless Chromium; every wait is on a condition, never a sleep.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathOf, routes } from '../../src/contracts/routes.js';
import { ExitCode } from '../../src/core/error-table.js';
import { consoleEvaluationHash } from '../../src/core/vocabulary.js';
import { reply, startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.js';
import { scores } from '../llm/helpers.js';
import { launchChromium, requireChromium } from '../support/chromium.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { fakeProviderEnv } from '../support/llm-server.js';
import { startServer, type ServerHandle } from '../support/server.js';

const SHOTS = process.env.CONSOLE_SCREENSHOTS_DIR ?? join('.test-results', 'console');

/** Code the judges score low (the fake judge looks for this word), with the feedback they give. */
const BROKEN = 'BROKEN';
const LOW_FEEDBACK = 'Crashes on an empty input file.';
const HIGH_FEEDBACK = 'Clear, handles empty input, well tested.';

// A case's id is also its name in reports (the CLI names a batch line by its `id`).
const CSV = { id: 'csv-totals-per-customer', task: 'Parse a CSV file of orders and total the amount per customer' };
const RESIZE = { id: 'resize-png-images', task: 'Resize every PNG image in a folder to a maximum width of 800 pixels' };
const SLACK = { id: 'slack-alert-on-failed-backup', task: 'Send a Slack message when the nightly backup job fails' };
const MARKDOWN = { id: 'markdown-to-html-with-toc', task: 'Convert a Markdown README into HTML with a table of contents' };

const SINGLE_TASK = 'Reverse a string';

const codeFor = (task: string, broken = false) =>
  `import csv\n\ndef run(path):\n    # ${task}\n    ${broken ? `raise ValueError("${BROKEN}")` : 'with open(path) as f:\n        return [row for row in csv.reader(f)]'}\n`;

interface Run { id: string; status: string }

describe('console: evaluation runs in headless Chromium', { timeout: 120_000 }, () => {
  let fake: FakeLlm;
  let dir: { path: string; remove(): Promise<void> };
  let server: ServerHandle;
  let browser: Browser;
  let baseline: Run;
  let next: Run;
  let single: Run;
  let comment: string;
  const browserErrors: string[] = [];

  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`POST ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  };

  /** A CI run recorded through the API, as `service evaluate --batch` does: create, one evaluation per case, finish. */
  async function recordRun(
    run: { label: string; commit: string; branch: string },
    cases: { id: string; task: string }[],
    finish: Record<string, unknown>,
  ): Promise<Run> {
    const created = await post<Run>(pathOf(routes.createEvaluation), {
      label: run.label, git: { commit: run.commit, branch: run.branch }, ci_provider: 'github-actions', num_evals: 3, gate: { min_score: 5 },
    });
    for (const c of cases) {
      await post(pathOf(routes.evaluate), { run_id: created.id, case_id: c.id, name: c.id, task: c.task, code: codeFor(c.task), output: 'ok: 3 rows', num_evals: 3 });
    }
    return (await post<{ run: Run }>(pathOf(routes.finishEvaluation, { id: created.id }), finish)).run;
  }

  async function open(hash: string, width = 1280): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    page.on('console', (m) => {
      if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) browserErrors.push(m.text());
    });
    page.on('pageerror', (e) => browserErrors.push(String(e)));
    await page.goto(`${server.url}${pathOf(routes.consolePage)}${hash}`);
    return { context, page };
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    requireChromium();
    await mkdir(SHOTS, { recursive: true });
    fake = await startFakeLlm();
    // The judges score by what they read (so the order of calls, and a cache, change nothing).
    fake.script((call) => {
      const broken = call.prompt.includes(BROKEN);
      return reply.json(scores(broken ? 3 : 8.5, { feedback: broken ? LOW_FEEDBACK : HIGH_FEEDBACK }));
    });
    dir = await tempDir('console-evaluations-');
    server = await startServer({
      dataPath: join(dir.path, 'data'),
      env: { ...fakeProviderEnv(fake, 'provider_a'), SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true' },
    });
    baseline = await recordRun({ label: 'main', commit: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', branch: 'main' }, [CSV, RESIZE, SLACK], { bless_on_pass: true });
    // The next CI run through the CLI: one case gets worse, one is new, one went missing.
    const cases = join(dir.path, 'cases.jsonl');
    // The case that gets worse is evaluated second: the run's page still shows it first.
    const lines = [RESIZE, { ...CSV, broken: true }, MARKDOWN].map((c) => JSON.stringify({ id: c.id, task: c.task, code: codeFor(c.task, 'broken' in c), output: 'ok: 3 rows' }));
    await writeFile(cases, lines.join('\n') + '\n');
    const cli = await runCli([
      'evaluate', '--batch', cases, '--num-evals', '3', '--min-score', '5', '--label', 'main', '--baseline', 'main', '--concurrency', '1',
      '--git-commit', 'b2c3d4e5f60718293a4b5c6d7e8f901234567890', '--git-branch', 'feature/faster-csv', '--ci-provider', 'github-actions',
      '--markdown', join(dir.path, 'comment.md'),
    ], { env: { SERVICE_URL: server.url } });
    expect(cli.code, cli.stderr).toBe(ExitCode.BELOW_MIN_SCORE); // a baseline case is missing
    comment = await readFile(join(dir.path, 'comment.md'), 'utf8');
    const listed = await (await fetch(`${server.url}${pathOf(routes.listEvaluations)}?label=main`)).json() as { runs: Run[] };
    next = listed.runs[0];
    // A single synchronous evaluation, no run asked for: a run of one case.
    await post(pathOf(routes.evaluate), { task: SINGLE_TASK, code: 'def run(s):\n    return s[::-1]\n', num_evals: 3 });
    single = (await (await fetch(`${server.url}${pathOf(routes.listEvaluations)}`)).json() as { runs: Run[] }).runs[0];
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await fake?.close();
    await dir?.remove();
  });

  it('lists every run, the single evaluation too, with label, commit, status and pass rate; filters are links', async () => {
    expect(baseline.status).toBe('passed');
    expect(next.status).toBe('failed'); // a baseline case is missing
    const { context, page } = await open('#/evaluations');
    try {
      const table = page.getByRole('table', { name: 'Evaluation runs, newest first' });
      await table.waitFor();
      const rows = table.getByRole('row');
      expect(await rows.count()).toBe(1 + 3);
      // Newest first: the single evaluation, the regressed run, the baseline.
      expect(await rows.nth(1).getByRole('link').first().getAttribute('href')).toBe(consoleEvaluationHash(single.id));
      const second = await rows.nth(2).textContent();
      expect(second).toContain('main');
      expect(second).toContain('b2c3d4e5f607');
      expect(second).toContain('feature/faster-csv');
      expect(second).toContain('failed');
      expect(second).toContain('66.7%');
      expect(second).toContain('2/3');
      const third = await rows.nth(3).textContent();
      expect(third).toContain('a1b2c3d4e5f6');
      expect(third).toContain('passed');
      expect(third).toContain('baseline'); // blessed
      expect(third).toContain('100.0%');
      await shot(page, 'evaluation-runs');
      expect([baseline.id, next.id]).not.toContain(single.id);

      await page.getByLabel('Status').selectOption('failed');
      await page.getByRole('button', { name: 'Apply filter' }).click();
      await page.waitForURL(/status=failed/);
      await rows.nth(2).waitFor({ state: 'detached' });
      expect(await rows.nth(1).getByRole('link').first().getAttribute('href')).toBe(consoleEvaluationHash(next.id));

      // A filter is a link: the label's two runs, newest first.
      await page.goto(`${server.url}${pathOf(routes.consolePage)}#/evaluations?label=main`);
      await rows.nth(2).waitFor();
      await rows.nth(3).waitFor({ state: 'detached' });
      expect(await Promise.all([1, 2].map((i) => rows.nth(i).getByRole('link').first().getAttribute('href'))))
        .toEqual([consoleEvaluationHash(next.id), consoleEvaluationHash(baseline.id)]);
      expect(await page.getByLabel('Label').inputValue()).toBe('main');
    } finally {
      await context.close();
    }
  });

  it("a run's page shows each case with its task, highlighted code, output and every judge's feedback, failures first", async () => {
    const { context, page } = await open(consoleEvaluationHash(next.id));
    try {
      await page.getByRole('heading', { level: 1, name: 'Evaluation run' }).waitFor();
      const cases = page.getByRole('article', { name: /^Case / });
      await cases.nth(2).waitFor();
      expect(await cases.count()).toBe(3);
      const first = page.getByRole('article', { name: `Case ${CSV.id}` });
      expect(await cases.first().getAttribute('aria-label')).toBe(`Case ${CSV.id}`);
      expect(await first.textContent()).toContain(CSV.task);
      expect(await first.textContent()).toContain('failed');
      await first.locator('pre.code .tok-keyword', { hasText: 'def' }).first().waitFor();
      expect(await first.getByLabel(`Code of case ${CSV.id}`).textContent()).toContain(BROKEN);
      expect(await first.getByLabel(`Output of case ${CSV.id}`).textContent()).toBe('ok: 3 rows');
      const judges = first.getByRole('table', { name: `Judges of ${CSV.id}` });
      expect(await judges.getByRole('row').count()).toBe(1 + 3);
      expect(await judges.getByRole('row').filter({ hasText: LOW_FEEDBACK }).count()).toBe(3);
      const facts = await page.locator('.facts').first().textContent();
      expect(facts).toContain('github-actions');
      expect(facts).toContain('feature/faster-csv');
      await shot(page, 'evaluation-run');
    } finally {
      await context.close();
    }
  });

  it('compares two runs side by side after choosing the baseline: the regressed case first, then missing, new and unchanged', async () => {
    const { context, page } = await open(consoleEvaluationHash(next.id));
    try {
      await page.getByRole('combobox', { name: 'Baseline' }).selectOption(baseline.id);
      await page.getByRole('button', { name: 'Compare side by side' }).click();
      await page.waitForURL((url) => url.hash === consoleEvaluationHash(next.id, baseline.id));
      await page.getByRole('heading', { level: 1, name: 'Compare evaluation runs' }).waitFor();
      const table = page.getByRole('table', { name: 'Cases compared with the baseline, regressions first' });
      await table.waitFor();
      const rows = table.getByRole('row');
      expect(await rows.count()).toBe(1 + 4);
      const cells = [];
      for (let i = 1; i <= 4; i++) cells.push(await rows.nth(i).getByRole('cell').allTextContents());
      // Change, case, baseline median, median, delta, baseline verdict, this run's verdict.
      expect(cells[0]).toEqual(['regressed', CSV.id, '8.50', '3', '-5.50', 'passed', 'failed']);
      expect(cells.slice(1).map((row) => row.slice(0, 2))).toEqual([['missing', SLACK.id], ['new', MARKDOWN.id], ['unchanged', RESIZE.id]]);
      expect(await page.getByLabel('Comparison summary').textContent()).toContain('1 regressed');

      // The regressed case is open, both runs' judges side by side.
      const regressed = page.locator('details.change-regressed');
      expect(await regressed.getAttribute('open')).not.toBeNull();
      await regressed.getByRole('region', { name: `Baseline: ${CSV.id}` }).getByText(HIGH_FEEDBACK).first().waitFor();
      await regressed.getByRole('region', { name: `This run: ${CSV.id}` }).getByText(LOW_FEEDBACK).first().waitFor();
      await shot(page, 'evaluation-compare');

      // Another noise margin is another link, answered by the server.
      await page.getByLabel('Noise margin (median points)').fill('6');
      await page.getByRole('button', { name: 'Compare with this margin' }).click();
      await page.waitForURL(/regression_delta=6/);
      await page.getByText(/dropped by more than 6 \(the judges' noise margin\)/).waitFor();
      // Still regressed: a pass that turns into a fail is a regression whatever the margin.
      expect(await rows.nth(1).getByRole('cell').first().textContent()).toBe('regressed');
    } finally {
      await context.close();
    }
    expect(browserErrors).toEqual([]);
  });

  it('the run and comparison pages fit a 390 px screen (only tables and code scroll sideways)', async () => {
    for (const hash of [consoleEvaluationHash(next.id), consoleEvaluationHash(next.id, baseline.id)]) {
      const { context, page } = await open(hash, 390);
      try {
        await page.getByRole('heading', { level: 2, name: /^(Cases \(|Side by side)/ }).waitFor();
        await page.getByRole('status').filter({ hasText: /^Loading/ }).first().waitFor({ state: 'detached' });
        expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBe(390);
        // (A string: it runs in the page, whose DOM types the test's tsconfig does not load.)
        const wide = await page.evaluate<string[]>(`[...document.querySelectorAll('body *')]
          .filter((el) => !el.closest('.table-wrap, pre.code') && el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
          .map((el) => el.tagName.toLowerCase() + '.' + el.className)`);
        expect(wide).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });

  it('a single evaluation is a run of one case, with its task and judges', async () => {
    const { context, page } = await open(consoleEvaluationHash(single.id));
    try {
      const only = page.getByRole('article', { name: /^Case / });
      await only.waitFor();
      expect(await only.textContent()).toContain(SINGLE_TASK);
      expect(await only.getByRole('table').getByRole('row').count()).toBe(1 + 3);
      expect(await page.locator('.facts').first().textContent()).toContain('1 (1 passed, 0 failed)');
    } finally {
      await context.close();
    }
  });

  it("the link in the run's Markdown comment (service evaluate --markdown) opens the run in the console", async () => {
    const link = comment.match(/\[Run `[0-9a-z]+` in the console\]\((\S+)\)/)?.[1] ?? '';
    expect(link).toBe(`${server.url}${pathOf(routes.consolePage)}${consoleEvaluationHash(next.id)}`);
    const { context, page } = await open('');
    try {
      await page.goto(link);
      await page.getByRole('heading', { level: 1, name: 'Evaluation run' }).waitFor();
      expect(await page.locator('.facts').first().textContent()).toContain(next.id);
      expect(await page.getByRole('article', { name: /^Case / }).count()).toBe(3);
    } finally {
      await context.close();
    }
  });

  it('a label names its blessed run as the baseline in a comparison link', async () => {
    const { context, page } = await open(consoleEvaluationHash(next.id, 'main'));
    try {
      const column = page.getByRole('region', { name: 'Baseline', exact: true });
      await column.getByRole('link').waitFor();
      expect(await column.getByRole('link').getAttribute('href')).toBe(consoleEvaluationHash(baseline.id));
    } finally {
      await context.close();
    }
  });
});
