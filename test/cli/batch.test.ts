import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * `service recall --batch` and `service learn --batch`: many tasks through one process, NDJSON
 * answers in input order with their line numbers, failures inline, the worst exit code.
 */
let server: ServerHandle;
let dir: { path: string; remove(): Promise<void> };
const cli = (args: string[], input?: string) => runCli([...args, '--url', server.url], { input });

interface Answer {
  line: number;
  id?: unknown;
  result?: { stored?: boolean; pattern_key?: string; matches?: { pattern: { task: string; reuse_count: number } }[] };
  error?: { message: string; exit_code: number; status?: number };
}
const answers = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l) as Answer);

const RUNS = [
  { task: 'parse a CSV file into a list of records', code: 'import csv', eval_score: 8, id: 'csv' },
  { task: 'resize uploaded images to thumbnails', code: 'from PIL import Image', eval_score: 7 },
  { task: 'retry an HTTP call with exponential backoff', code: 'backoff()', eval_score: 9 },
];

beforeAll(async () => {
  dir = await tempDir('svc-cli-batch-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
});
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

describe('learn --batch', () => {
  it('learns one NDJSON run per line; a bad line is answered inline and the exit code is the worst seen', async () => {
    const input = [
      ...RUNS.map((r) => JSON.stringify(r)),
      JSON.stringify({ task: 'too good to be true', code: 'x', eval_score: 11 }),
      'not json at all',
      '',
      JSON.stringify({ task: 'a run with a typo', code: 'x', eval_scor: 5 }),
    ].join('\n');
    const res = await cli(['learn', '--batch', '-'], input);
    expect(res.code).toBe(2);
    const out = answers(res.stdout);
    expect(out.map((a) => a.line)).toEqual([1, 2, 3, 4, 5, 7]);
    expect(out[0]).toMatchObject({ line: 1, id: 'csv', result: { stored: true, pattern_key: expect.stringMatching(/^patterns\//) } });
    expect(out[1].result?.stored).toBe(true);
    expect(out[2].result?.stored).toBe(true);
    expect(out[3].error).toMatchObject({ status: 422, exit_code: 2 });
    expect(out[3].error?.message).toMatch(/eval_score/);
    expect(out[4].error).toEqual({ message: 'not valid JSON', exit_code: 2 });
    expect(out[5].error?.message).toMatch(/^unknown field eval_scor/);
    expect(res.stderr).toBe('');
  });

  it('refuses --task and friends next to --batch, and a missing file, before sending anything', async () => {
    const both = await cli(['learn', '--batch', '-', '--task', 'x']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--batch takes each run from its line/);
    const missing = await cli(['learn', '--batch', join(dir.path, 'nope.ndjson')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read the --batch file ".*nope\.ndjson": no such file/);
  });
});

describe('recall --batch', () => {
  it('answers a task per line or an object of recall fields, in order, read-only, with ids echoed', async () => {
    const input = [
      'parse a CSV file into records',
      JSON.stringify({ task: 'make thumbnails of uploaded pictures', limit: 1, id: 42 }),
      '   ',
      JSON.stringify({ task: '', limit: 1 }),
      '{"task": broken',
      JSON.stringify({ task: 'retry with backoff', limit: 1, colour: 'red' }),
    ].join('\r\n');
    const res = await cli(['recall', '--batch', '--limit', '2'], input);
    expect(res.code).toBe(2);
    const out = answers(res.stdout);
    expect(out.map((a) => a.line)).toEqual([1, 2, 4, 5, 6]);
    expect(out[0].result?.matches).toHaveLength(2);
    expect(out[0].result?.matches?.[0].pattern.task).toBe(RUNS[0].task);
    expect(out[1]).toMatchObject({ id: 42 });
    expect(out[1].result?.matches?.[0].pattern.task).toBe(RUNS[1].task);
    expect(out[2].error).toMatchObject({ status: 422, exit_code: 2 });
    expect(out[3].error?.message).toBe('not valid JSON');
    expect(out[4].error?.message).toMatch(/^unknown field colour/);
    // Exploring counts nothing: no match was counted as a reuse.
    expect(out[0].result?.matches?.every((m) => m.pattern.reuse_count === 0)).toBe(true);
  });

  it('keeps input order with --concurrency and exits 0 when every line succeeded', async () => {
    const file = join(dir.path, 'tasks.txt');
    const tasks = Array.from({ length: 30 }, (_, i) => `${['parse', 'resize', 'retry'][i % 3]} job number ${i}`);
    await writeFile(file, `${tasks.join('\n')}\n`);
    const res = await cli(['recall', '--batch', file, '--concurrency', '5', '--limit', '1']);
    expect(res.code).toBe(0);
    const out = answers(res.stdout);
    expect(out.map((a) => a.line)).toEqual(tasks.map((_, i) => i + 1));
    expect(out.every((a) => a.result?.matches?.length === 1)).toBe(true);
  });

  it('--count-reuse applies to every line; a task argument next to --batch is a usage error', async () => {
    const res = await cli(['recall', '--batch', '-', '--limit', '1', '--count-reuse'], `${RUNS[2].task}\n${RUNS[2].task}\n`);
    expect(res.code).toBe(0);
    const after = answers((await cli(['recall', '--batch', '-', '--limit', '1'], `${RUNS[2].task}\n`)).stdout);
    expect(after[0].result?.matches?.[0].pattern.reuse_count).toBe(2);
    const both = await cli(['recall', 'a task', '--batch', '-']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/drop the task argument/);
    const none = await cli(['recall']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/missing required argument 'task'/);
  });
});
