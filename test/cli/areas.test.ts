import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliInTty, stripAnsi } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * Every area has a command: patterns get/delete, metrics, skills, completion; plus
 * --env-file, `version` with the server down, and the recall table's columns.
 */
let server: ServerHandle;
let dir: { path: string; remove(): Promise<void> };
let key: string;
const cli = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) => runCli([...args, '--url', server.url], opts);

beforeAll(async () => {
  dir = await tempDir('svc-cli-areas-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
  const learned = await cli(['learn', '--task', 'parse a CSV file into records', '--code', '-', '--eval-score', '8'], { input: 'import csv\n' });
  expect(learned.code).toBe(0);
  key = (JSON.parse(learned.stdout) as { pattern_key: string }).pattern_key;
});
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

describe('patterns, metrics, skills', () => {
  it('patterns get shows every field (the code came from stdin via --code -)', async () => {
    const res = await cli(['patterns', 'get', key]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ key, task: 'parse a CSV file into records', code: 'import csv', eval_score: 8, source: 'cli' });
    const missing = await cli(['patterns', 'get', 'patterns/doesnotexist0']);
    expect(missing.code).toBe(4);
  });

  it('skills register and search', async () => {
    const reg = await cli(['skills', 'register', key, 'CSV', 'parsing', 'csv']);
    expect(reg.code).toBe(0);
    expect(JSON.parse(reg.stdout)).toEqual({ pattern_key: key, registered: 2, skills: ['csv', 'parsing'] });
    const any = JSON.parse((await cli(['skills', 'search', 'csv', 'yaml'])).stdout) as { count: number };
    expect(any.count).toBe(1);
    const all = JSON.parse((await cli(['skills', 'search', 'csv', 'yaml', '--all'])).stdout) as { count: number };
    expect(all.count).toBe(0);
  });

  it('metrics as JSON and as a table', async () => {
    expect(JSON.parse((await cli(['metrics'])).stdout)).toMatchObject({ runs: 1, pattern_count: 1 });
    const table = await cli(['metrics', '--format', 'table']);
    expect(table.stdout).toMatch(/^metric\s+value\nruns\s+1\n/);
  });

  it('patterns list pages newest first with --cursor, filters, and prints the next command in a table', async () => {
    const second = await cli(['learn', '--task', 'rotate the log files every week', '--code', 'rotate()', '--eval-score', '6']);
    const secondKey = (JSON.parse(second.stdout) as { pattern_key: string }).pattern_key;
    const first = JSON.parse((await cli(['patterns', 'list', '--limit', '1'])).stdout) as { patterns: { key: string }[]; next_cursor: string };
    expect(first.patterns.map((p) => p.key)).toEqual([secondKey]);
    const next = JSON.parse((await cli(['patterns', 'list', '--limit', '1', '--cursor', first.next_cursor])).stdout);
    expect(next).toMatchObject({ patterns: [{ key, task: 'parse a CSV file into records', success_score: 8, source: 'cli' }], next_cursor: null });
    const good = JSON.parse((await cli(['patterns', 'list', '--min-score', '7'])).stdout) as { patterns: { key: string }[] };
    expect(good.patterns.map((p) => p.key)).toEqual([key]);
    const table = await cli(['patterns', 'list', '--limit', '1', '--format', 'table']);
    expect(table.stdout).toMatch(/^key\s+success\s+reused\s+updated\s+task\n/);
    expect(table.stdout).toContain(`more: service patterns list --cursor ${first.next_cursor}`);
    const bad = await cli(['patterns', 'list', '--cursor', 'garbage']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid --cursor: must be the next_cursor of a previous page');
    expect((await cli(['patterns', 'delete', secondKey, '--yes'])).code).toBe(0);
  });

  it('the recall table shows the score it is ordered by, the similarity and the tier', async () => {
    const res = await runCliInTty(['recall', 'parse a CSV file into records', '--readonly', '--url', server.url], { env: { NO_COLOR: '1' } });
    expect(res.code).toBe(0);
    expect(stripAnsi(res.output)).toMatch(/rank\s+score\s+similarity\s+tier\s+key\s+task/);
    expect(stripAnsi(res.output)).toMatch(/1\s+\d\.\d{3}\s+1\.000\s+duplicate\s+patterns\//);
  });

  it('patterns delete asks (refuses without a terminal), then deletes with --yes', async () => {
    const refused = await cli(['patterns', 'delete', key]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`refusing to delete ${key} without confirmation: pass --yes`);
    const deleted = await cli(['patterns', 'delete', key, '--yes']);
    expect(deleted.code).toBe(0);
    expect((await cli(['patterns', 'get', key])).code).toBe(4);
  });
});

describe('shell conveniences', () => {
  it('--env-file supplies SERVICE_URL; a variable set in the shell wins', async () => {
    const file = join(dir.path, 'service.env');
    await writeFile(file, `# the service\nSERVICE_URL=${server.url}\n`);
    const res = await runCli(['health', '--env-file', file]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ status: 'ok' });
    const before = await runCli(['--env-file', file, 'health']);
    expect(before.code).toBe(0);
    const shellWins = await runCli(['health', '--env-file', file], { env: { SERVICE_URL: 'http://127.0.0.1:1' } });
    expect(shellWins.code).toBe(1);
    // Node 20 itself also reacts to --env-file anywhere on its command line and stops with its
    // own message (exit 9) before the CLI runs; either way the run fails naming the file.
    const missing = await runCli(['health', '--env-file', join(dir.path, 'nope.env')]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('nope.env');
  });

  it('version with the server down still prints the CLI version (human and JSON)', async () => {
    const json = await runCli(['version', '--url', 'http://127.0.0.1:1']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ cli: { version: expect.any(String) }, server: null });
    const human = await runCli(['version', '--url', 'http://127.0.0.1:1', '--format', 'table']);
    expect(human.stdout).toMatch(/^cli {5}\d+\.\d+\.\d+/);
  });

  it('completion scripts: bash parses (bash -n) and completes commands, subcommands and flags', async () => {
    const res = await runCli(['completion', 'bash']);
    expect(res.code).toBe(0);
    const script = join(dir.path, 'service.bash');
    await writeFile(script, res.stdout);
    expect(spawnSync('bash', ['-n', script]).status).toBe(0);
    const complete = (words: string[]) => spawnSync('bash', ['-c',
      `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _service_completion; echo "\${COMPREPLY[*]}"`,
    ]).stdout.toString().trim();
    expect(complete(['service', 'pat'])).toBe('patterns');
    expect(complete(['service', 'keys', 're'])).toBe('revoke');
    expect(complete(['service', 'governance', 're'])).toBe('retention');
    expect(complete(['service', 'governance', 'retention', 'apply', '--dr'])).toBe('--dry-run');
    // Flags and their values before the command path do not hide it.
    expect(complete(['service', '--env-file', 'x.env', 'keys', 'revoke', '--y'])).toBe('--yes');
    // The old `retention` name still runs but is not offered.
    const topLevel = /^ {4}""\) opts="([^"]*)"/m.exec(res.stdout)?.[1].split(' ');
    expect(topLevel).toContain('governance');
    expect(topLevel).not.toContain('retention');
    expect(res.stdout).not.toMatch(/^ {4}"retention/m);
    for (const shell of ['zsh', 'fish']) {
      const other = await runCli(['completion', shell]);
      expect(other.code).toBe(0);
      expect(other.stdout).toContain('patterns');
    }
    expect((await runCli(['completion', 'powershell'])).code).toBe(2);
  });

  it('every command\'s --help ends with examples', async () => {
    for (const args of [['recall'], ['learn'], ['keys', 'revoke'], ['migrate', 'status'], ['completion'], ['evaluate']]) {
      const res = await runCli([...args, '--help']);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/Examples:\n( {2}\$ .*service .+\n)+$/);
    }
  });
});
