/**
 * The web console by role and at the default rate limits, end to end: a real `service serve`
 * (PostgreSQL storage, DB auth, no rate-limit overrides: 60 requests a minute per IP) seeded
 * through the API, driven by Debian's headless Chromium through playwright-core. Every wait is
 * on a condition, never a sleep.
 *
 * - A reader is shown only what the server gives it: no confidential pattern or filter, no
 *   button of a permission it lacks ("Replace skill tags", "Compute … rollup").
 * - "Export this filter" is one request for any number of patterns.
 * - The recall debugger's copy lines never carry a hostile link's text as shell code.
 * - The activity dashboard counts lookups as well as reuses, and says how the ROI score is made.
 * - The page's tab icon loads (no failed request on a page load).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, requireChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, tempDir } from '../support/env.js';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';

const TOKEN = 'console-roles-bootstrap-token-0123456789';
const hasPg = await requirePostgres('web console by role');

const CLASSES = ['public', 'internal', 'confidential'] as const;
const WORDS = ['parse', 'dates', 'send', 'mail', 'resize', 'images', 'rotate', 'logs', 'merge', 'csv', 'hash', 'files', 'zip', 'folders'];
/** 132 patterns (over 100, past where one request per pattern ran into 429), a third of each classification. */
const RECORDS = Array.from({ length: 132 }, (_, n) => ({
  key: `patterns/role${String(n).padStart(4, '0')}`,
  task: `console role task ${n}: ${WORDS[n % 14]} ${WORDS[(n * 5 + 3) % 14]} ${WORDS[(n * 3 + 1) % 14]} number ${n * 7919}`,
  code: `def run():\n    return ${n}\n`,
  eval_score: 5 + (n % 5),
  classification: CLASSES[n % 3],
}));
const CONFIDENTIAL = RECORDS.filter((r) => r.classification === 'confidential');
const VISIBLE = RECORDS.filter((r) => r.classification !== 'confidential');

interface Issued { key_id: string; secret: string }

describe.skipIf(!hasPg)('web console by role, at the default rate limits, in headless Chromium', { timeout: 180_000 }, () => {
  let db: TestDatabase;
  let dir: { path: string; remove(): Promise<void> };
  let server: ServerHandle;
  let browser: Browser;
  let admin: Issued;
  let reader: Issued;
  /** Keys of a project of their own, for the activity figures. */
  let activityAdmin: Issued;
  let activityReader: Issued;
  const browserErrors: string[] = [];

  const call = async (method: string, path: string, secret: string, body?: unknown) => {
    const response = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };

  /** A page signed in with `secret`, and every request and failed response it makes. */
  async function signedIn(secret: string): Promise<{ context: BrowserContext; page: Page; requests: string[]; failed: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    const requests: string[] = [];
    const failed: string[] = [];
    page.on('request', (r) => requests.push(new URL(r.url()).pathname));
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });
    page.on('pageerror', (e) => browserErrors.push(String(e)));
    await page.goto(`${server.url}/console`);
    await page.getByLabel('API key', { exact: true }).fill(secret);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Patterns' }).waitFor();
    return { context, page, requests, failed };
  }

  beforeAll(async () => {
    requireChromium();
    db = await createTestDatabase('console_roles');
    const schema = await createMigratedSchema(db, 'console_roles');
    dir = await tempDir('console-roles-');
    // No SERVICE_RATE_LIMIT_* here: the defaults are the point.
    server = await startServer({
      dataPath: join(dir.path, 'data'),
      env: { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url, SERVICE_BOOTSTRAP_TOKEN: TOKEN, SERVICE_LLM_PROVIDER: 'none' },
    });
    const owner = await (await fetch(`${server.url}/v1/keys/bootstrap`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: TOKEN }),
    })).json() as Issued;
    admin = await call('POST', '/v1/keys', owner.secret, { name: 'roles admin', role: 'admin' });
    reader = await call('POST', '/v1/keys', owner.secret, { name: 'roles reader', role: 'reader' });
    activityAdmin = await call('POST', '/v1/keys', owner.secret, { name: 'activity admin', role: 'admin', project_id: 'activity' });
    activityReader = await call('POST', '/v1/keys', owner.secret, { name: 'activity reader', role: 'reader', project_id: 'activity' });
    expect(await call('POST', '/v1/import', admin.secret, { records: RECORDS })).toMatchObject({ imported: RECORDS.length });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await dir?.remove();
    await db?.drop();
  });

  /** Clicks "Export this filter as NDJSON" and reads the downloaded file's records. */
  async function exportFromConsole(page: Page): Promise<{ key: string; classification: string }[]> {
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export this filter as NDJSON' }).click();
    const file = await download;
    const text = await readFile((await file.path())!, 'utf8');
    return text.trim().split('\n').map((l) => JSON.parse(l));
  }

  it('a reader browses no confidential pattern, is offered no confidential filter, and exports the 88 it may read in one request', async () => {
    const { context, page, requests } = await signedIn(reader.secret);
    try {
      const table = page.getByRole('table', { name: 'Patterns, newest first' });
      await table.waitFor();
      expect(await table.textContent()).not.toContain('confidential');
      const options = await page.getByRole('combobox', { name: /^Classification/ }).locator('option').allTextContents();
      expect(options).toEqual(['any', 'public', 'internal']);

      const records = await exportFromConsole(page);
      expect(records.map((r) => r.key).sort()).toEqual(VISIBLE.map((r) => r.key).sort());
      await page.getByRole('status').filter({ hasText: `${VISIBLE.length} patterns exported` }).waitFor();
      // One request for all of them: no read per pattern.
      expect(requests.filter((p) => p === '/v1/patterns/export')).toHaveLength(1);
      expect(requests.filter((p) => /^\/v1\/patterns\/patterns/.test(p))).toEqual([]);

      // What the list leaves out cannot be opened either.
      await page.goto(`${server.url}/console#/pattern/${encodeURIComponent(CONFIDENTIAL[0].key)}`);
      expect(await page.getByRole('alert').textContent()).toMatch(/^404 not_found/);
    } finally {
      await context.close();
    }
  });

  it('an admin exports all 132 patterns, confidential included, in one request at the default limits', async () => {
    const { context, page, requests } = await signedIn(admin.secret);
    try {
      const options = await page.getByRole('combobox', { name: /^Classification/ }).locator('option').allTextContents();
      expect(options).toEqual(['any', 'public', 'internal', 'confidential']);
      const records = await exportFromConsole(page);
      expect(records.map((r) => r.key).sort()).toEqual(RECORDS.map((r) => r.key).sort());
      expect(records.filter((r) => r.classification === 'confidential')).toHaveLength(CONFIDENTIAL.length);
      expect(requests.filter((p) => p === '/v1/patterns/export')).toHaveLength(1);
    } finally {
      await context.close();
    }
  });

  it('a reader is shown no "Replace skill tags" and no "Compute … rollup" button; an admin is', async () => {
    const key = encodeURIComponent(VISIBLE[0].key);
    const asReader = await signedIn(reader.secret);
    try {
      await asReader.page.goto(`${server.url}/console#/pattern/${key}`);
      await asReader.page.getByText('Replacing skill tags needs an editor key.').waitFor();
      expect(await asReader.page.getByRole('button', { name: 'Replace skill tags' }).count()).toBe(0);
      await asReader.page.goto(`${server.url}/console#/activity`);
      await asReader.page.getByRole('article', { name: 'daily rollup' }).getByText('Computing a rollup needs an editor key.').waitFor();
      expect(await asReader.page.getByRole('button', { name: /^Compute .* rollup now$/ }).count()).toBe(0);
    } finally {
      await asReader.context.close();
    }
    const asAdmin = await signedIn(admin.secret);
    try {
      await asAdmin.page.goto(`${server.url}/console#/pattern/${key}`);
      await asAdmin.page.getByRole('button', { name: 'Replace skill tags' }).waitFor();
      await asAdmin.page.goto(`${server.url}/console#/activity`);
      await asAdmin.page.getByRole('button', { name: 'Compute daily rollup now' }).waitFor();
    } finally {
      await asAdmin.context.close();
    }
  });

  it('the recall debugger shows no command line for a hostile link, and quotes every value of the lines it shows', async () => {
    const marker = join(tmpdir(), `console-pwned-${process.pid}`);
    const { context, page } = await signedIn(admin.secret);
    try {
      const hostile = [
        `limit=5%20%24(touch%20${encodeURIComponent(marker)})`,
        'classification=public%3Bid',
        `min_score=1%60touch%20${encodeURIComponent(marker)}%60`,
        'recency_weight=0.5%7Cid',
        'deduplicate=false%26%26id',
      ];
      for (const option of hostile) {
        await page.goto(`${server.url}/console#/recall?task=x&${option}`);
        const note = page.getByRole('status').filter({ hasText: 'No command line for this link' });
        await note.waitFor();
        expect(await note.textContent()).toContain(option.split('=')[0]);
        expect(await page.getByLabel('service recall command').count()).toBe(0);
        expect(await page.getByLabel('curl command').count()).toBe(0);
      }

      // Valid options with a task full of shell syntax: the lines show, and a shell reads each
      // value back as one word, running nothing.
      const task = `it's $(touch ${marker}) \`touch ${marker}\` "quoted" ; | & > ${marker}`;
      await page.goto(`${server.url}/console#/recall?task=${encodeURIComponent(task)}&limit=3&classification=internal&min_score=0.5&recency_weight=0.25`);
      const cli = (await page.getByLabel('service recall command').textContent()) ?? '';
      const curl = (await page.getByLabel('curl command').textContent()) ?? '';
      const words = async (line: string, program: string) => new Promise<string[]>((resolve, reject) => {
        // The program is replaced by a function that prints the words it was given.
        execFile('bash', ['-c', `${program}() { printf '%s\\0' "$@"; }; ${line}`], { env: childEnv({}) }, (err, out) =>
          err ? reject(err) : resolve(out.split('\0').slice(0, -1)));
      });
      expect(await words(cli, 'service')).toEqual([
        'recall', '--explain', '--limit', '3', '--classification', 'internal', '--min-score', '0.5', '--recency-weight', '0.25', task,
      ]);
      const curlWords = await words(curl, 'curl');
      const url = new URL(curlWords.at(-1)!);
      expect(url.pathname).toBe('/v1/recall');
      expect(url.searchParams.get('task')).toBe(task);
      expect(url.searchParams.get('limit')).toBe('3');
      expect(existsSync(marker)).toBe(false);
    } finally {
      await context.close();
      await rm(marker, { force: true });
    }
  });

  it('the activity dashboard counts read-only lookups and reuses, and says how the ROI score is made', { timeout: 180_000 }, async () => {
    await call('POST', '/v1/learn', activityAdmin.secret, { task: RECORDS[0].task, code: RECORDS[0].code, eval_score: 8 });
    // Four lookups (what the CLI, the console's search and MCP send) and one counting recall.
    for (let i = 0; i < 3; i++) await call('GET', `/v1/recall?task=${encodeURIComponent(RECORDS[0].task)}`, activityReader.secret);
    await call('POST', '/v1/recall', activityReader.secret, { task: RECORDS[0].task, readonly: true });
    await call('POST', '/v1/recall', activityAdmin.secret, { task: RECORDS[0].task });
    const { context, page } = await signedIn(activityAdmin.secret);
    try {
      await page.goto(`${server.url}/console#/activity`);
      const tiles = page.locator('.tiles');
      await tiles.getByText('5 (4 / 1)').waitFor();
      const daily = page.getByRole('article', { name: 'daily rollup' });
      const counts = daily.getByText('5 (4 read-only lookups, 1 counting reuse)');
      await daily.getByRole('button', { name: 'Compute daily rollup now' }).click();
      // This file's tests and seeding all come from one address, counted across the server's
      // processes against the default 60 a minute: when the console says the limit is reached,
      // a user waits the time it names and clicks again (the counts must then be right).
      const limited = daily.getByText(/rate_limited .*retry in (\d+) seconds/);
      await counts.or(limited).first().waitFor();
      if (await limited.isVisible()) {
        const seconds = Number(/retry in (\d+) seconds/.exec((await limited.textContent()) ?? '')![1]);
        await page.waitForTimeout((seconds + 1) * 1000);
        await daily.getByRole('button', { name: 'Compute daily rollup now' }).click();
      }
      await counts.waitFor();
      expect(await daily.textContent()).toContain('How the ROI score is made');
      expect(await daily.textContent()).toContain('0.4 × hit rate 1.00');
    } finally {
      await context.close();
    }
  });

  it('loads with a tab icon of its own and no failed request, for a reader as for an admin', async () => {
    for (const secret of [reader.secret, admin.secret]) await loadsCleanly(secret);
    expect(browserErrors).toEqual([]);
  });

  async function loadsCleanly(secret: string): Promise<void> {
    const { context, page, failed } = await signedIn(secret);
    try {
      const icon = await page.locator('link[rel="icon"]').getAttribute('href');
      expect(icon).toMatch(/^\/console\/assets\/favicon-[0-9a-f]+\.svg$/);
      const response = await page.request.get(`${server.url}${icon}`);
      expect(response.status()).toBe(200);
      expect(response.headers()['content-type']).toBe('image/svg+xml');
      // Signed in (the first load's 401 from /v1/health is what asks for a key), a page load
      // fails no request: no /favicon.ico, no probe the key may not make.
      failed.length = 0;
      await page.reload();
      await page.getByRole('table', { name: 'Patterns, newest first' }).waitFor();
      await page.getByRole('status').filter({ hasText: /^Loading/ }).first().waitFor({ state: 'detached' });
      expect(failed).toEqual([]);
    } finally {
      await context.close();
    }
  }
});
