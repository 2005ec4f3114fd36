import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';

/** The binary without a server: usage, version, unreachable service, local input and config errors. */

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

let dir: { path: string; remove(): Promise<void> };
let deadUrl: string;

beforeAll(async () => {
  dir = await tempDir('cli-basics-');
  deadUrl = `http://127.0.0.1:${await closedPort()}`;
});
afterAll(() => dir.remove());

describe('service (no server needed)', () => {
  it('--version prints the package version and exits 0', async () => {
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const res = await runCli(['--version']);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe(version);
  });

  it('recall --help documents --readonly (the documented examples use it) next to --count-reuse', async () => {
    const res = await runCli(['recall', '--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^\s+--readonly\s+do not count the matches as reuses/m);
    expect(res.stdout).toMatch(/^\s+--count-reuse\b/m);
  });

  it('keys rotate, aging and calibrate --help show --yes / --format', async () => {
    expect((await runCli(['keys', 'rotate', '--help'])).stdout).toMatch(/^\s+-y, --yes\b/m);
    expect((await runCli(['calibrate', '--help'])).stdout).toMatch(/^\s+--format <format>\s+table or json/m);
  });

  it('--help lists the commands and the exit-code table', async () => {
    const res = await runCli(['--help']);
    expect(res.code).toBe(0);
    for (const name of ['serve', 'learn', 'recall', 'export', 'import', 'health', 'version', 'reindex']) {
      expect(res.stdout).toMatch(new RegExp(`^\\s+${name}\\b`, 'm'));
    }
    expect(res.stdout).toContain('Exit codes:');
    expect(res.stdout).toMatch(/^\s+3\s+not authenticated \(401\)/m);
  });

  it('an unknown command or option is a usage error (exit 2)', async () => {
    const unknown = await runCli(['recal', 'x']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("error: unknown command 'recal'");
    expect(unknown.stderr).toContain('recall');

    const option = await runCli(['recall', 'x', '--limt', '3']);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("error: unknown option '--limt'");
  });

  it('an unknown command without a close match is one line and a hint, not the whole help', async () => {
    const res = await runCli(['xyzzy']);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe("error: unknown command 'xyzzy'\n  hint: see `service --help` for the commands\n");
  });

  it('with --json on the line, usage errors of any command are one JSON object (exit 2)', async () => {
    for (const args of [
      ['recall', 'x', '--limit', 'many', '--json'],
      ['keys', 'list', '--bogus', '--format', 'json'],
      ['governance', 'delete-project', '--json'],
      ['recal', 'x', '--json'],
    ]) {
      const res = await runCli(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stdout).toBe('');
      const { error } = JSON.parse(res.stderr) as { error: { message: string; exit_code: number; hint?: string } };
      expect(error.exit_code).toBe(2);
      expect(error.message).not.toMatch(/^error:/);
    }
    const typo = JSON.parse((await runCli(['recal', 'x', '--json'])).stderr) as { error: { message: string; hint: string } };
    expect(typo.error).toEqual({ message: "unknown command 'recal'", exit_code: 2, hint: 'did you mean recall?' });
  });

  it('missing required options and malformed numbers are usage errors (exit 2)', async () => {
    const missing = await runCli(['learn', '--task', 't', '--eval-score', '5']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("required option '--code <text>' not specified");

    const nan = await runCli(['recall', 'x', '--limit', 'many']);
    expect(nan.code).toBe(2);
    expect(nan.stderr).toContain('expected a whole number');
    expect(nan.stdout).toBe('');
  });

  it('an unreachable service is exit 1 with a message naming the URL', async () => {
    const res = await runCli(['recall', 'sort a list', '--url', deadUrl]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(
      `error: cannot reach the service at ${deadUrl}/v1/recall: connection refused\n  hint: is \`service serve\` running there? set --url or SERVICE_URL\n`,
    );
  });

  it('SERVICE_URL is the default for --url', async () => {
    const res = await runCli(['health'], { env: { SERVICE_URL: deadUrl } });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot reach the service at ${deadUrl}/v1/health`);
  });

  it('a malformed --url is a usage error', async () => {
    const res = await runCli(['health', '--url', 'localhost:8000']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('error: invalid service URL "localhost:8000"');
  });

  it('a missing @file is a usage error naming the flag and the path, before any request', async () => {
    const missing = join(dir.path, 'missing.py');
    const res = await runCli(['learn', '--task', 't', '--code', `@${missing}`, '--eval-score', '7', '--url', deadUrl]);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(`error: cannot read --code file "${missing}": no such file\n`);
  });

  it('an import file that is not JSON, or has invalid records, is exit 2 and sends nothing', async () => {
    const notJson = join(dir.path, 'not.json');
    await writeFile(notJson, 'records: []');
    const bad = await runCli(['import', notJson, '--url', deadUrl]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: .*not\.json is not valid JSON/);

    const invalid = join(dir.path, 'invalid.json');
    await writeFile(invalid, JSON.stringify({ records: [{ task: 'ok', code: 'x', eval_score: 5 }, { task: ' ', code: 'x', eval_score: 5 }] }));
    const res = await runCli(['import', invalid, '--url', deadUrl]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('1 invalid record(s), nothing imported');
    expect(res.stderr).toContain('records[1].task: must not be blank');
  });

  it('serve with a bad SERVICE_* value exits 2 naming the variable', async () => {
    const res = await runCli(['serve', '--port', '0'], { env: { SERVICE_DATA_PATH: dir.path, SERVICE_RATE_LIMIT_DEFAULT: 'lots' } });
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('error: SERVICE_RATE_LIMIT_DEFAULT: expected a number, got "lots"');
  });

  it('serve --port out of range is a usage error', async () => {
    const res = await runCli(['serve', '--port', '70000']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('expected a whole number from 0 to 65535');
  });
});
