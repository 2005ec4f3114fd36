import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliInTty, stripAnsi } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { makeCase, makeRun, runId } from '../contract/storage.contract.evaluation-runs.js';
import { startServer, type ServerHandle } from '../support/server.js';

/** export → file → import into a fresh server round-trips every pattern. */

interface Record_ { key: string; task: string; code: string; output: string | null; eval_score: number; success_score: number; classification: string; source: string; run_id: string | null }
interface Export { records: Record_[]; count: number }

const TASKS = [
  'compute the median of a stream of numbers',
  'render a markdown table from rows of data',
  'validate an email address with a regular expression',
  'merge two sorted linked lists into one',
];

let dir: { path: string; remove(): Promise<void> };
let source: ServerHandle;
let target: ServerHandle;

beforeAll(async () => {
  dir = await tempDir('cli-import-export-');
  [source, target] = await Promise.all([
    startServer({ dataPath: join(dir.path, 'source') }),
    startServer({ dataPath: join(dir.path, 'target') }),
  ]);
  for (const [i, task] of TASKS.entries()) {
    const res = await runCli(['learn', '--task', task, '--code', `solution_${i}()`, '--eval-score', String(5 + i),
      '--classification', i % 2 ? 'confidential' : 'public', '--output', `out ${i}`, '--url', source.url]);
    expect(res.code).toBe(0);
  }
});
afterAll(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
  await dir.remove();
});

const comparable = (r: Record_) => ({
  key: r.key, task: r.task, code: r.code, output: r.output, eval_score: r.eval_score,
  success_score: r.success_score, classification: r.classification, source: r.source, run_id: r.run_id,
});

describe('export and import', () => {
  it('export > file, then import file into a fresh server: same records', async () => {
    const exported = await runCli(['export', '--url', source.url]);
    expect(exported.code).toBe(0);
    const doc = JSON.parse(exported.stdout) as Export;
    expect(doc.count).toBe(TASKS.length);
    const file = join(dir.path, 'export.json');
    await writeFile(file, exported.stdout);

    const imported = await runCli(['import', file, '--url', target.url]);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toEqual({ imported: TASKS.length, skipped: 0, total: TASKS.length });

    const roundTrip = JSON.parse((await runCli(['export', '--url', target.url])).stdout) as Export;
    const byKey = (a: Record_, b: Record_) => a.key.localeCompare(b.key);
    expect(roundTrip.records.map(comparable).sort(byKey)).toEqual(doc.records.map(comparable).sort(byKey));

    // Imported patterns are searchable: their tasks were embedded on import.
    const recall = await runCli(['recall', TASKS[2], '--limit', '1', '--readonly', '--url', target.url]);
    expect((JSON.parse(recall.stdout) as { matches: { pattern: { task: string } }[] }).matches[0].pattern.task).toBe(TASKS[2]);
  });

  it('importing again skips existing keys; --overwrite replaces them; a bare array on stdin works', async () => {
    const file = join(dir.path, 'export.json');
    const again = await runCli(['import', file, '--url', target.url]);
    expect(JSON.parse(again.stdout)).toEqual({ imported: 0, skipped: TASKS.length, total: TASKS.length });
    // On a terminal the progress line counts records sent, so it never claims imports the totals deny.
    const tty = stripAnsi((await runCliInTty(['import', file, '--url', target.url], { env: { NO_COLOR: '1' } })).output);
    expect(tty).toContain(`sent ${TASKS.length}/${TASKS.length} records`);
    expect(tty).not.toMatch(/imported \d+\/\d+/);
    expect(tty.indexOf('sent ')).toBeLessThan(tty.indexOf(`imported 0, skipped ${TASKS.length}`));

    const doc = JSON.parse(await readFile(file, 'utf8')) as Export;
    const edited = doc.records.map((r) => ({ ...r, code: `${r.code} # v2` }));
    const overwrite = await runCli(['import', '-', '--overwrite', '--url', target.url], { input: JSON.stringify(edited) });
    expect(overwrite.code).toBe(0);
    expect(JSON.parse(overwrite.stdout)).toEqual({ imported: TASKS.length, skipped: 0, total: TASKS.length });
    const after = JSON.parse((await runCli(['export', '--url', target.url])).stdout) as Export;
    expect(after.records.every((r) => r.code.endsWith(' # v2'))).toBe(true);
  });

  it('an NDJSON file with evaluation_run lines restores the runs with their cases; again, they are skipped', async () => {
    const run = makeRun(41, { status: 'passed', finished_at: '2026-01-02T00:00:00.000Z' });
    const cases = [makeCase('second-first'), makeCase('a-then')];
    const file = join(dir.path, 'runs.ndjson');
    const record = { task: 'parse an ISO date into parts', code: 'parse()', eval_score: 7 };
    await writeFile(file, `${JSON.stringify(record)}\n${JSON.stringify({ type: 'evaluation_run', run, cases })}\n`);

    const first = await runCli(['import', file, '--url', target.url]);
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toMatchObject({ imported: 1, total: 1, evaluation_runs_imported: 1, evaluation_runs_skipped: 0 });
    const detail = await (await fetch(`${target.url}/v1/evaluations/${runId(41)}`)).json() as { run: unknown; cases: unknown[] };
    expect(detail).toEqual({ run, cases });

    const again = await runCli(['import', file, '--url', target.url, '--format', 'table']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('restored 0 evaluation runs with their cases, skipped 1 already stored');
  });

  it('export --output writes the file atomically and reports where', async () => {
    const outDir = join(dir.path, 'out');
    await runCli(['export', '--output', join(outDir, 'x.json'), '--url', source.url]).then((res) => {
      // The directory does not exist: a usage error, and nothing half-written anywhere.
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`cannot write "${join(outDir, 'x.json')}"`);
    });

    const target_ = join(dir.path, 'backup.json');
    await writeFile(target_, 'old content');
    const res = await runCli(['export', '--output', target_, '--url', source.url]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ count: TASKS.length, output: target_ });
    expect((JSON.parse(await readFile(target_, 'utf8')) as Export).count).toBe(TASKS.length);
    expect((await readdir(dir.path)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
