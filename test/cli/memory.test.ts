import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasColour, runCli, runCliInTty, stripAnsi } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/** learn / recall / health / version through the real binary against a real server. */

let dir: { path: string; remove(): Promise<void> };
let server: ServerHandle;
const cli = (args: string[], input?: string, env?: Record<string, string>) => runCli([...args, '--url', server.url], { input, env });

const SORT_TASK = 'sort a list of integers in ascending order with python';
const CSV_TASK = 'parse a csv file into a list of dictionaries keyed by header';
const HTTP_TASK = 'retry an http request with exponential backoff and jitter';

beforeAll(async () => {
  dir = await tempDir('cli-memory-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
});
afterAll(async () => {
  await server?.stop();
  await dir.remove();
});

interface Learned { stored: boolean; pattern_count: number; pattern_key: string }
interface Recalled { matches: { pattern_key: string; similarity: number; reuse_tier: string; pattern: { task: string; code: string; reuse_count: number } }[]; has_more: boolean; next_offset: number | null }

describe('learn', () => {
  it('stores a run and answers JSON when stdout is piped', async () => {
    const res = await cli(['learn', '--task', SORT_TASK, '--code', 'print(sorted(xs))', '--eval-score', '8.5']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const body = JSON.parse(res.stdout) as Learned;
    expect(body.stored).toBe(true);
    expect(body.pattern_count).toBe(1);
    expect(body.pattern_key).toMatch(/^patterns\/[0-9a-z]+$/);
  });

  it('reads the task from stdin and the code from @file, verbatim, with source cli', async () => {
    const file = join(dir.path, 'parse_csv.py');
    const code = 'import csv\n\ndef load(path):\n    with open(path) as f:\n        return list(csv.DictReader(f))\n';
    await writeFile(file, code);
    const res = await cli(['learn', '--task', '-', '--code', `@${file}`, '--eval-score', '7', '--run-id', 'run-77'], `${CSV_TASK}\n`);
    expect(res.code).toBe(0);
    const { pattern_key } = JSON.parse(res.stdout) as Learned;

    const exported = JSON.parse((await cli(['export'])).stdout) as { records: { key: string; task: string; code: string; source: string; run_id: string }[] };
    const record = exported.records.find((r) => r.key === pattern_key);
    expect(record).toMatchObject({ task: CSV_TASK, code, source: 'cli', run_id: 'run-77' });
  });

  it('a near-identical run with a lower score is not stored', async () => {
    const res = await cli(['learn', '--task', SORT_TASK, '--code', 'xs.sort()', '--eval-score', '3']);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ stored: false, pattern_count: 2 });
  });

  it('an out-of-range score is a validation error: exit 2, error: <detail> on stderr, nothing on stdout', async () => {
    const res = await cli(['learn', '--task', HTTP_TASK, '--code', 'x', '--eval-score', '11']);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^error: invalid --eval-score: /);
  });

  it('refuses two stdin arguments (exit 2)', async () => {
    const res = await cli(['learn', '--task', '-', '--code', '-', '--eval-score', '5'], 'x');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('only one argument can read stdin');
  });
});

describe('recall', () => {
  beforeAll(async () => {
    const res = await cli(['learn', '--task', HTTP_TASK, '--code', 'backoff()', '--eval-score', '9']);
    expect(res.code).toBe(0);
  });

  it('reads the task from stdin (`echo task | service recall -`) and ranks the related pattern first', async () => {
    const res = await cli(['recall', '-', '--limit', '3'], 'sort integers ascending in python\n');
    expect(res.code).toBe(0);
    const body = JSON.parse(res.stdout) as Recalled;
    expect(body.matches.length).toBe(3);
    expect(body.matches[0].pattern.task).toBe(SORT_TASK);
  });

  it('pages with --limit and --offset', async () => {
    const first = JSON.parse((await cli(['recall', SORT_TASK, '--limit', '1', '--readonly'])).stdout) as Recalled;
    expect(first.matches.length).toBe(1);
    expect(first.has_more).toBe(true);
    expect(first.next_offset).toBe(1);
    const second = JSON.parse((await cli(['recall', SORT_TASK, '--limit', '1', '--offset', '1', '--readonly'])).stdout) as Recalled;
    expect(second.matches.length).toBe(1);
    expect(second.matches[0].pattern_key).not.toBe(first.matches[0].pattern_key);
  });

  it('recall is read-only by default (--readonly still accepted); --count-reuse counts the reuse', async () => {
    const reuseCount = async (extra: string[]) => {
      const body = JSON.parse((await cli(['recall', HTTP_TASK, '--limit', '1', ...extra])).stdout) as Recalled;
      expect(body.matches[0].pattern.task).toBe(HTTP_TASK);
      expect(body.matches[0].reuse_tier).toBe('duplicate');
      return body.matches[0].pattern.reuse_count;
    };
    const before = await reuseCount([]);
    expect(await reuseCount([])).toBe(before);
    expect(await reuseCount(['--readonly'])).toBe(before);
    await reuseCount(['--count-reuse']);
    expect(await reuseCount([])).toBe(before + 1);
    const both = await cli(['recall', HTTP_TASK, '--readonly', '--count-reuse']);
    expect(both.code).toBe(2);
  });

  it('a mistyped --project with no patterns says so on stderr; a project with patterns does not', async () => {
    const typo = await cli(['recall', HTTP_TASK, '--project', 'tema_b']);
    expect(typo.code).toBe(0);
    expect(JSON.parse(typo.stdout)).toMatchObject({ matches: [] });
    expect(typo.stderr).toBe('warning: project "tema_b" has no patterns: check the name given by --project (a project starts with its first learn or import)\n');
    const env = await cli(['recall', HTTP_TASK], undefined, { SERVICE_PROJECT: 'tema_b' });
    expect(env.stderr).toContain('given by SERVICE_PROJECT');
    const none = await cli(['recall', HTTP_TASK, '--project', 'default', '--min-score', '10']);
    expect(JSON.parse(none.stdout)).toMatchObject({ matches: [] });
    expect(none.stderr).toBe('');
  });

  it('a limit out of bounds is exit 2', async () => {
    const res = await cli(['recall', SORT_TASK, '--limit', '51']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^error: .*limit/);
  });

  it('--project isolates patterns (X-Project-Id)', async () => {
    const learned = await cli(['learn', '--task', 'project scoped task about graphs', '--code', 'g', '--eval-score', '6', '--project', 'team_b']);
    expect(JSON.parse(learned.stdout)).toMatchObject({ stored: true, pattern_count: 1 });
    const other = JSON.parse((await cli(['export', '--project', 'team_b'])).stdout) as { count: number };
    expect(other.count).toBe(1);
    const mine = JSON.parse((await cli(['export'])).stdout) as { records: { task: string }[] };
    expect(mine.records.map((r) => r.task)).not.toContain('project scoped task about graphs');
  });
});

describe('output for people', () => {
  it('on a terminal recall prints a table with coloured tiers', async () => {
    const res = await runCliInTty(['recall', HTTP_TASK, '--limit', '2', '--readonly', '--url', server.url]);
    expect(res.code).toBe(0);
    expect(hasColour(res.output)).toBe(true);
    const plain = stripAnsi(res.output);
    expect(plain).toMatch(/rank\s+score\s+similarity\s+tier\s+key\s+task\s+code/);
    expect(plain).toMatch(/^1\s+\d\.\d{3}\s+1\.000\s+duplicate\s+patterns\/[0-9a-z]+\s+retry an http request.*\s+backoff\(\)/m);
    expect(plain).toContain('more matches: --offset 2');
  });

  it('--explain prints each match\'s score parts and the tier policy (JSON when piped)', async () => {
    const res = await runCliInTty(['recall', HTTP_TASK, '--limit', '2', '--readonly', '--explain', '--url', server.url], { env: { NO_COLOR: '1' } });
    expect(res.code).toBe(0);
    expect(res.output).toMatch(/^1: cosine 1\.000 · centred 1\.000 · bm25 \d+\.\d{3} · blended \d\.\d{3} · eval ×\d\.\d{3} · recency ×1\.000 · score \d\.\d{3} · rule same_text/m);
    // Three patterns: a small project, so the model's fixed adapt threshold applies.
    expect(res.output).toContain('tier policy calibrated: duplicate by rule (same text, cosine ≥ 0.999 or LLM), adapt ≥ 0.76 (small_project_fallback)');
    const piped = JSON.parse((await cli(['recall', HTTP_TASK, '--limit', '1', '--readonly', '--explain'])).stdout) as Recalled & { tier_policy: { policy: string } };
    expect(piped.tier_policy.policy).toBe('calibrated');
    expect((piped.matches[0] as unknown as { explain: { tier_rule: string } }).explain.tier_rule).toBe('same_text');
  });

  it('NO_COLOR removes every colour code, --json prints JSON even on a terminal', async () => {
    const noColor = await runCliInTty(['recall', HTTP_TASK, '--limit', '1', '--readonly', '--url', server.url], { env: { NO_COLOR: '1' } });
    expect(noColor.code).toBe(0);
    expect(hasColour(noColor.output)).toBe(false);
    expect(noColor.output).toContain('duplicate');
    // FORCE_COLOR=0 is the other convention for "no colour": honoured the same way.
    const forcedOff = await runCliInTty(['recall', HTTP_TASK, '--limit', '1', '--url', server.url], { env: { FORCE_COLOR: '0' } });
    expect(forcedOff.code).toBe(0);
    expect(hasColour(forcedOff.output)).toBe(false);
    expect(forcedOff.output).toContain('duplicate');

    const json = await runCliInTty(['health', '--json', '--url', server.url]);
    expect(json.code).toBe(0);
    const text = stripAnsi(json.output);
    expect(JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1))).toMatchObject({ status: 'ok', storage: 'json' });
  });

  it('on a terminal learn says whether the run was stored', async () => {
    const res = await runCliInTty(['learn', '--task', HTTP_TASK, '--code', 'x', '--eval-score', '1', '--url', server.url], { env: { NO_COLOR: '1' } });
    expect(res.code).toBe(0);
    expect(res.output).toContain('not stored: a near-identical pattern with an equal or better score already exists');
    // It names the pattern it kept.
    expect(stripAnsi(res.output)).toMatch(/kept patterns\/[0-9a-z]+/);
    expect(res.output).toMatch(/pattern count: \d+/);
  });
});

describe('health and version', () => {
  it('health and health --deep report ok', async () => {
    const basic = await cli(['health']);
    expect(basic.code).toBe(0);
    expect(JSON.parse(basic.stdout)).toMatchObject({ status: 'ok', storage: 'json' });

    const deep = await cli(['health', '--deep']);
    expect(deep.code).toBe(0);
    const body = JSON.parse(deep.stdout) as { status: string; checks: Record<string, { status: string }> };
    expect(body.status).toBe('ok');
    expect(body.checks.storage.status).toBe('ok');
    expect(body.checks.embedding.status).toBe('ok');
  });

  it('version prints the CLI and the server versions', async () => {
    const res = await cli(['version']);
    expect(res.code).toBe(0);
    const body = JSON.parse(res.stdout) as { cli: { version: string }; server: { app_version: string; api_version: string } };
    expect(body.server.api_version).toBe('v1');
    expect(body.server.app_version).toBe(body.cli.version);
  });
});
