import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputNumberReplacer } from '../../src/core/output-numbers.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * `recall --batch` goes through POST /v1/recall/batch (+), up to 100 lines per request, so the
 * default per-IP limits do not throttle a batch to one line a second: 250 lines are 3 requests
 * (counted by the server's own request metrics), and every line's answer is what its own
 * POST /v1/recall answers, errors included. When the server's limit still slows a batch, one
 * line on stderr says why.
 */
let server: ServerHandle;
let dir: { path: string; remove(): Promise<void> };
const TOPICS = ['parse a CSV file into records', 'resize uploaded images to thumbnails', 'retry an HTTP call with backoff', 'hash a password with a salt'];

async function requestCount(base: string, route: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(/^service_requests_total\{([^}]*)\} (\d+)$/gm)) {
    if (m[1].includes(`path="${route}"`) && m[1].includes('method="POST"')) total += Number(m[2]);
  }
  return total;
}

interface Answer { line: number; id?: unknown; result?: unknown; error?: { message: string; exit_code: number; status?: number } }
const answers = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l) as Answer);

beforeAll(async () => {
  dir = await tempDir('svc-recall-batch-');
  // The server's own request counters (GET /metrics) count the requests the batch made. The
  // standard limit is raised for the test's own line-by-line comparison only; the batch's
  // (expensive) limit keeps its default.
  server = await startServer({ dataPath: join(dir.path, 'data'), env: { SERVICE_METRICS: 'true', SERVICE_RATE_LIMIT_DEFAULT: '10000' } });
  for (const [i, task] of TOPICS.entries()) {
    const res = await runCli(['learn', '--task', task, '--code', `code ${i}`, '--eval-score', String(6 + i), '--url', server.url]);
    expect(res.code).toBe(0);
  }
});
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

describe('recall --batch through POST /v1/recall/batch', () => {
  it('250 lines: 3 requests, and each answer equals its own POST /v1/recall', async () => {
    const lines = Array.from({ length: 250 }, (_, i) => {
      if (i === 7) return JSON.stringify({ task: '   ', id: 'blank' });
      if (i === 8) return JSON.stringify({ task: 'parse csv', limit: 0 });
      if (i === 9) return '{"task": broken';
      if (i % 5 === 0) return JSON.stringify({ task: `${TOPICS[i % 4]} (variant ${i})`, limit: 2, id: i });
      return `${TOPICS[i % 4]} number ${i}`;
    });
    const file = join(dir.path, 'tasks.txt');
    await writeFile(file, `${lines.join('\n')}\n`);
    const beforeBatch = await requestCount(server.url, '/v1/recall/batch');
    const beforeSingle = await requestCount(server.url, '/v1/recall');

    const res = await runCli(['recall', '--batch', file, '--limit', '3', '--url', server.url]);

    expect(await requestCount(server.url, '/v1/recall/batch') - beforeBatch).toBe(3);
    expect(await requestCount(server.url, '/v1/recall') - beforeSingle).toBe(0);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('');
    const out = answers(res.stdout);
    expect(out.map((a) => a.line)).toEqual(lines.map((_, i) => i + 1));

    // Each line alone, as one POST /v1/recall (read-only, as the CLI sends it).
    const recallIds = new Set<string>();
    for (const [i, text] of lines.entries()) {
      if (i === 9) {
        expect(out[i].error).toEqual({ message: 'not valid JSON', exit_code: 2 });
        continue;
      }
      const fields = text.startsWith('{') ? JSON.parse(text) as Record<string, unknown> : { task: text };
      const { id, ...request } = fields;
      const alone = await fetch(`${server.url}/v1/recall`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ limit: 3, deduplicate: true, eval_weighted: true, readonly: true, ...request }),
      });
      const body = await alone.json() as { detail?: string; recall_id?: string };
      if (alone.status === 200) {
        // The command line prints numbers rounded (docs/behavior.md), the answer itself exact.
        // Every recall has its own recall_id (docs/behavior.md "Outcomes"): each line prints its own.
        const lineRecallId = (out[i].result as { recall_id: string }).recall_id;
        expect(lineRecallId).toMatch(/^[0-9a-z]{18}$/);
        expect(recallIds.has(lineRecallId)).toBe(false);
        recallIds.add(lineRecallId);
        expect(lineRecallId).not.toBe(body.recall_id);
        const printed = JSON.parse(JSON.stringify({ ...body, recall_id: lineRecallId }, outputNumberReplacer)) as unknown;
        expect(out[i], `line ${i + 1}`).toEqual({ line: i + 1, ...(id === undefined ? {} : { id }), result: printed });
      } else {
        expect(out[i], `line ${i + 1}`).toMatchObject({ line: i + 1, error: { status: alone.status, exit_code: 2, message: body.detail } });
      }
    }
  });

  it('the typed client: one request answers each item in its place, a bad one as its ApiError', async () => {
    const { ServiceClient, ApiError } = await import('../../src/client/index.js');
    const client = new ServiceClient({ url: server.url });
    try {
      const [good, bad] = await client.recallBatch([{ task: TOPICS[0], limit: 1, readonly: true }, { task: '' }]);
      expect(good).toMatchObject({ matches: [{ pattern: { task: TOPICS[0] } }] });
      expect(bad).toBeInstanceOf(ApiError);
      expect(bad).toMatchObject({ status: 422 });
    } finally {
      await client.close();
    }
  });
});

describe('recall --batch under a tight rate limit', () => {
  let slow: ServerHandle;
  beforeAll(async () => {
    slow = await startServer({
      dataPath: join(dir.path, 'slow-data'),
      env: { SERVICE_RATE_LIMIT_EXPENSIVE: '1', SERVICE_RATE_LIMIT_WINDOW_SECONDS: '1' },
    });
  });
  afterAll(async () => {
    await slow?.stop();
  });

  it('says once on stderr why the batch waits, and still answers every line', async () => {
    const input = Array.from({ length: 300 }, (_, i) => `task number ${i}`).join('\n');
    const res = await runCli(['recall', '--batch', '-', '--concurrency', '1', '--url', slow.url], { input });
    expect(res.code).toBe(0);
    expect(answers(res.stdout)).toHaveLength(300);
    const notes = res.stderr.split('\n').filter((l) => l.startsWith('note: the server\'s rate limit slows this batch'));
    expect(notes).toHaveLength(1);
  });
});
