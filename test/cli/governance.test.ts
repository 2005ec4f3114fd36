/**
 * `service export --ndjson`, `service classify` and `service governance delete-*` run in-process
 * through main() against a real listening server (HTTP over loopback): stdout, stderr, exit
 * codes, the file written, and the refusal to delete without --yes when nobody can confirm.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../commands/main.js';
import { NdjsonExportRecord } from '../../src/contracts/governance.js';
import { startGovServer, type GovServer } from '../api/governance.helpers.js';
import { learnBody, ManualClock } from '../api/helpers.js';
import { fakeIo } from '../support/fake-io.js';

const ADMIN = 'db.admin.acme.web';
const OWNER = 'db.owner.acme.web';

describe('governance commands', () => {
  let t: GovServer;
  let url: string;
  let dir: string;
  const keys: string[] = [];

  const run = async (args: string[], key = ADMIN) => {
    const { io, stdout, stderr } = fakeIo({ env: { noColor: true } });
    const code = await main(['node', 'service', ...args, '--url', url, '--api-key', key], io);
    return { code, stdout: stdout.text, stderr: stderr.text };
  };
  const patternCount = async (key: string) => (await t.call('GET', '/v1/metrics', key)).json().pattern_count as number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-gov-'));
    t = await startGovServer(new ManualClock(new Date('2025-03-01T00:00:00.000Z')));
    await t.server.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(t.server.server.address() as AddressInfo).port}`;
    for (const task of ['Parse a CSV file and average the price column', 'Render an invoice as a PDF with a logo']) {
      keys.push((await t.call('POST', '/v1/learn', ADMIN, learnBody(task))).json().pattern_key);
    }
    await t.call('POST', '/v1/learn', 'db.admin.acme.side', learnBody('Back up the side project database nightly'));
  });
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('classify prints the updated pattern; a bad classification is a usage error', async () => {
    const res = await run(['classify', keys[0], 'public']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ key: keys[0], classification: 'public' });
    const bad = await run(['classify', keys[0], 'secret']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('public, internal, confidential');
  });

  it('export --ndjson streams records to stdout or to a file, filtered by classification', async () => {
    const all = await run(['export', '--ndjson']);
    expect(all.code, all.stderr).toBe(0);
    const lines = all.stdout.trim().split('\n').map((l) => NdjsonExportRecord.parse(JSON.parse(l)));
    expect(lines.map((r) => r.key)).toEqual(keys);

    const file = join(dir, 'public.ndjson');
    const pub = await run(['export', '--ndjson', '--classification', 'public', '--output', file]);
    expect(pub.code, pub.stderr).toBe(0);
    expect(JSON.parse(pub.stdout)).toEqual({ count: 1, output: file, format: 'ndjson' });
    const written = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(written).toEqual([expect.objectContaining({ key: keys[0], tenant_id: 'acme', project_id: 'web' })]);
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);

    expect((await run(['export', '--ndjson', '--classification', 'secret'])).code).toBe(2);
  });

  it('refuses a deletion without --yes when stdin is not a terminal, and deletes nothing', async () => {
    for (const args of [['governance', 'delete-scope'], ['governance', 'delete-project', 'side'], ['governance', 'delete-tenant', 'acme']]) {
      const res = await run(args, OWNER);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain('--yes');
    }
    expect(await patternCount(ADMIN)).toBe(2);
    expect(await patternCount('db.admin.acme.side')).toBe(1);
  });

  it('delete-scope --dry-run counts; delete-project --yes deletes and prints what went', async () => {
    const dry = await run(['governance', 'delete-scope', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ tenant_id: 'acme', project_id: 'web', patterns_deleted: 2, dry_run: true });
    expect(await patternCount(ADMIN)).toBe(2);

    const del = await run(['governance', 'delete-project', 'side', '--yes'], OWNER);
    expect(del.code, del.stderr).toBe(0);
    expect(JSON.parse(del.stdout)).toMatchObject({ project_id: 'side', patterns_deleted: 1, projects_deleted: 1, dry_run: false });
    expect(await patternCount('db.admin.acme.side')).toBe(0);
    expect(await patternCount(ADMIN)).toBe(2);

    const denied = await run(['governance', 'delete-tenant', 'acme', '--yes'], ADMIN);
    expect(denied.code).toBe(3);
    expect(denied.stderr).toContain('tenants:delete');

    const scope = await run(['governance', 'delete-scope', '--yes']);
    expect(JSON.parse(scope.stdout)).toMatchObject({ project_id: 'web', patterns_deleted: 2 });
    expect(await patternCount(ADMIN)).toBe(0);
  });
});
