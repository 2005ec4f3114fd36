/**
 * `service analytics …` and `service governance retention …` (and its old name `service
 * retention …`) run in-process through main() against a
 * real listening server (HTTP over loopback), checking stdout, stderr and exit codes.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../commands/main.js';
import { startGovServer, type GovServer } from '../api/governance.helpers.js';
import { learnBody, ManualClock } from '../api/helpers.js';
import { fakeIo } from '../support/fake-io.js';

const DAY = 86_400_000;
const T0 = new Date('2025-02-01T00:00:00.000Z');
const ADMIN = 'db.admin.acme.web';
const ENV_ADMIN = 'env.admin.acme.*';
const RETENTION = ['governance', 'retention'];

describe('analytics and retention commands', () => {
  const clock = new ManualClock(new Date(T0));
  let t: GovServer;
  let url: string;

  const run = async (args: string[], key = ADMIN, tty = false) => {
    const { io, stdout, stderr } = fakeIo({ stdoutTTY: tty, env: { noColor: true } });
    const code = await main(['node', 'service', ...args, '--url', url, '--api-key', key], io);
    return { code, stdout: stdout.text, stderr: stderr.text };
  };

  beforeAll(async () => {
    t = await startGovServer(clock);
    await t.server.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(t.server.server.address() as AddressInfo).port}`;
    await t.call('POST', '/v1/learn', ADMIN, learnBody('Parse a CSV file and average the price column', { eval_score: 9 }));
    await t.call('POST', '/v1/learn', ADMIN, learnBody('Render an invoice as a PDF with a logo', { eval_score: 2, expires_at: new Date(T0.getTime() + DAY).toISOString() }));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('analytics get exits 4 before a rollup, then rollup and get print the same JSON', async () => {
    const missing = await run(['analytics', 'get', 'daily']);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/no daily rollup has been computed/);

    const computed = await run(['analytics', 'rollup', 'daily', '--json']);
    expect(computed.code).toBe(0);
    const rollup = JSON.parse(computed.stdout);
    expect(rollup).toMatchObject({ window: 'daily', event_count: 2, learn: { count: 2, stored: 2, avg_eval_score: 5.5, success_rate: 0.5 } });
    // Learns only: the score is the learn success rate alone.
    expect(rollup.roi_score).toBeCloseTo(5, 10);

    const got = await run(['analytics', 'get', 'daily']);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual(rollup);

    // On a terminal: the human rendering.
    const human = await run(['analytics', 'get', 'daily'], ADMIN, true);
    expect(human.stdout).toContain('daily rollup');
    expect(human.stdout).toContain('ROI score  5.00 / 10');
    expect(human.stdout).toMatch(/learn +2 calls, 2 stored, avg eval 5\.50, success 50\.0%/);
    expect((await run(['analytics', 'events'], ADMIN, true)).stdout).toMatch(/learn +eval 9\.0, stored/);
  });

  it('analytics events honours --limit and refuses a bad window or limit as usage errors', async () => {
    const events = await run(['analytics', 'events', '--limit', '1']);
    expect(events.code).toBe(0);
    expect(JSON.parse(events.stdout).count).toBe(1);
    expect((await run(['analytics', 'events', '--limit', '0'])).code).toBe(2);
    expect((await run(['analytics', 'rollup', 'monthly'])).code).toBe(2);
  });

  it('governance retention get / set / apply --dry-run / apply', async () => {
    const got = await run([...RETENTION, 'get']);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual({ retention_days: 365, source: 'default' });

    const set = await run([...RETENTION, 'set', '30']);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ retention_days: 30, source: 'project' });
    expect((await run([...RETENTION, 'set', '0'])).code).toBe(2);

    const refused = await run([...RETENTION, 'set', '30'], ENV_ADMIN);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/DB auth/);

    clock.set(new Date(T0.getTime() + 2 * DAY).toISOString());
    const dry = await run([...RETENTION, 'apply', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({ purged_count: 1, dry_run: true });
    const real = await run([...RETENTION, 'apply', '--yes']);
    expect(JSON.parse(real.stdout)).toEqual({ purged_count: 1, dry_run: false });
    expect(await t.app.deps.storage.patterns.count({ tenant_id: 'acme', project_id: 'web' })).toBe(1);

    expect((await run([...RETENTION, 'get'], ADMIN, true)).stdout).toBe("30 days after last update (this project's setting)\n");
    const inherit = await run([...RETENTION, 'set', 'inherit']);
    expect(JSON.parse(inherit.stdout)).toEqual({ retention_days: 365, source: 'default' });
  });

  it('the old name `service retention …` still runs the same commands, hidden from --help', async () => {
    const viaAlias = await run(['retention', 'set', '45']);
    expect(viaAlias.code).toBe(0);
    expect(JSON.parse(viaAlias.stdout)).toEqual({ retention_days: 45, source: 'project' });
    expect(JSON.parse((await run([...RETENTION, 'get'])).stdout)).toEqual({ retention_days: 45, source: 'project' });
    expect(JSON.parse((await run(['retention'])).stdout)).toEqual({ retention_days: 45, source: 'project' });
    expect(JSON.parse((await run(['retention', 'apply', '--dry-run'])).stdout)).toEqual({ purged_count: 0, dry_run: true });
    expect((await run(['retention', 'set', 'inherit'])).code).toBe(0);

    const help = async (args: string[]) => {
      const { io, stdout } = fakeIo({ env: { noColor: true } });
      expect(await main(['node', 'service', ...args, '--help'], io)).toBe(0);
      return stdout.text;
    };
    expect(await help([])).toMatch(/^ {2}governance\b/m);
    expect(await help([])).not.toMatch(/^ {2}retention\b/m);
    expect(await help(['governance'])).toMatch(/^ {2}retention\b/m);
  });
});
