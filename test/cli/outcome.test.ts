import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliInTty } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * `service outcome` and the recall ids the CLI prints (docs/behavior.md "Outcomes"): a recall
 * answers its recall_id (the table's last line, `recall_id` in JSON, each `--batch` line's
 * result), and `service outcome RECALL_ID KEY --passed|--failed` reports against it.
 */
let server: ServerHandle;
let dir: { path: string; remove(): Promise<void> };
let key: string;
const TASK = 'Merge two sorted lists into one sorted list';

beforeAll(async () => {
  dir = await tempDir('svc-outcome-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
  const learned = await runCli(['learn', '--task', TASK, '--code', 'def merge(a, b): ...', '--eval-score', '8', '--url', server.url, '--json']);
  expect(learned.code, learned.stderr).toBe(0);
  key = (JSON.parse(learned.stdout) as { pattern_key: string }).pattern_key;
});
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

describe('service outcome', () => {
  it('reports a recall\'s outcome, replaces it, and shows it on the pattern', async () => {
    const recalled = await runCli(['recall', TASK, '--url', server.url, '--json']);
    expect(recalled.code, recalled.stderr).toBe(0);
    const recallId = (JSON.parse(recalled.stdout) as { recall_id: string }).recall_id;
    expect(recallId).toMatch(/^[0-9a-z]{18}$/);

    const failed = await runCli(['outcome', recallId, key, '--failed', '--score', '3', '--detail', 'drops duplicates', '--source', 'tests', '--url', server.url, '--json']);
    expect(failed.code, failed.stderr).toBe(0);
    expect(JSON.parse(failed.stdout)).toMatchObject({ recall_id: recallId, pattern_key: key, passed: false, score: 3, detail: 'drops duplicates', source: 'tests', replaced: false });

    const passed = await runCli(['outcome', recallId, key, '--passed', '--url', server.url]);
    expect(passed.code, passed.stderr).toBe(0);
    expect(JSON.parse(passed.stdout)).toMatchObject({ recall_id: recallId, pattern_key: key, passed: true, score: null, detail: null, replaced: true });

    const listed = await fetch(`${server.url}/v1/patterns/${encodeURIComponent(key)}/outcomes`);
    expect(((await listed.json()) as { outcomes: { passed: boolean }[] }).outcomes).toMatchObject([{ passed: true }]);
  });

  it('needs --passed or --failed (not both); an unknown recall exits 4', async () => {
    const neither = await runCli(['outcome', 'abc', key, '--url', server.url]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('--passed or --failed');
    const both = await runCli(['outcome', 'abc', key, '--passed', '--failed', '--url', server.url]);
    expect(both.code).toBe(2);
    const unknown = await runCli(['outcome', 'nosuchrecall', key, '--passed', '--url', server.url]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('nosuchrecall');
  });

  it('recall prints its recall_id on a terminal table and on each --batch line', async () => {
    const table = await runCliInTty(['recall', TASK, '--url', server.url], { env: { NO_COLOR: '1' } });
    expect(table.code, table.output).toBe(0);
    expect(table.output).toMatch(/recall_id [0-9a-z]{18} \(after reusing a match: service outcome [0-9a-z]{18} KEY --passed\|--failed\)/);

    const file = join(dir.path, 'tasks.txt');
    await writeFile(file, `${TASK}\nSort a list of numbers\n`);
    const batch = await runCli(['recall', '--batch', file, '--url', server.url]);
    expect(batch.code, batch.stderr).toBe(0);
    const ids = batch.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { result: { recall_id: string } }).result.recall_id);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(/^[0-9a-z]{18}$/);
    expect(new Set(ids).size).toBe(2);
    // A batch line's id takes outcomes like any other.
    const reported = await runCli(['outcome', ids[0], key, '--passed', '--url', server.url]);
    expect(reported.code, reported.stderr).toBe(0);
  });
});
