/**
 * `service migrate …` through the real command tree (main() in-process with in-memory
 * streams; the config comes from process.env, as in the binary).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../commands/main.js';
import { fakeIo } from '../support/fake-io.js';
import { adminQuery, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';

const hasPg = await requirePostgres('migrate command');

async function cli(args: string[], opts: { tty?: boolean } = {}) {
  const { io, stdout, stderr } = fakeIo({ stdoutTTY: opts.tty ?? false, env: { noColor: true } });
  const code = await main(['node', 'service', ...args], io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe.skipIf(!hasPg)('service migrate', () => {
  let db: TestDatabase;
  const saved = { ...process.env };

  beforeAll(async () => {
    db = await createTestDatabase('migrate_cmd');
  });
  afterEach(() => {
    process.env = { ...saved };
  });
  afterAll(async () => {
    await db?.drop();
  });

  function useDatabase(url: string | undefined): void {
    for (const k of Object.keys(process.env)) if (k.startsWith('SERVICE_')) delete process.env[k];
    if (url !== undefined) process.env.SERVICE_DATABASE_URL = url;
  }

  it('status, up, up again, down: prints what it did', async () => {
    useDatabase(db.url);
    const before = await cli(['migrate', 'status']);
    expect(before.code).toBe(0);
    expect(JSON.parse(before.stdout)).toMatchObject({ current: null, pending: ['0001_init', '0002_pattern_counts', '0003_fast_recall', '0004_reference_pattern_ids', '0006_billing', '0007_hybrid_recall', '0008_keyword_postings', '0009_keyword_term_cap', '0010_recall_outcomes', '0011_evaluation_runs', '0012_judge_cache', '0013_code_keyword_field', '0014_shared_rate_limits'] });

    const up = await cli(['migrate', 'up'], { tty: true });
    expect(up).toMatchObject({ code: 0, stderr: '' });
    expect(up.stdout).toBe('applying 0001_init\napplying 0002_pattern_counts\napplying 0003_fast_recall\napplying 0004_reference_pattern_ids\napplying 0006_billing\napplying 0007_hybrid_recall\napplying 0008_keyword_postings\napplying 0009_keyword_term_cap\napplying 0010_recall_outcomes\napplying 0011_evaluation_runs\napplying 0012_judge_cache\napplying 0013_code_keyword_field\napplying 0014_shared_rate_limits\napplied 13 migrations: database is at 0014_shared_rate_limits\n');

    const again = await cli(['migrate', 'up'], { tty: true });
    expect(again.stdout).toBe('nothing to apply: database is at 0014_shared_rate_limits\n');

    const status = await cli(['migrate', 'status'], { tty: true });
    expect(status.stdout).toMatch(/0001_init\s+applied\s+\d{4}-\d\d-\d\dT/);
    expect(status.stdout).toMatch(/0002_pattern_counts\s+applied\s+\d{4}-\d\d-\d\dT/);
    expect(status.stdout).toMatch(/0004_reference_pattern_ids\s+applied\s+\d{4}-\d\d-\d\dT/);
    expect(status.stdout).toMatch(/0007_hybrid_recall\s+applied\s+\d{4}-\d\d-\d\dT/);
    expect(status.stdout).toMatch(/0008_keyword_postings\s+applied\s+\d{4}-\d\d-\d\dT/);
    expect(status.stdout).toMatch(/0009_keyword_term_cap\s+applied\s+\d{4}-\d\d-\d\dT/);
    expect(status.stdout).toMatch(/0014_shared_rate_limits\s+applied\s+\d{4}-\d\d-\d\dT/);
    expect(status.stdout).toMatch(/up to date at 0014_shared_rate_limits/);

    const down = await cli(['migrate', 'down', '--to', '0', '--json', '--yes']);
    expect(down.code).toBe(0);
    expect(JSON.parse(down.stdout)).toEqual({
      direction: 'down',
      reverted: ['0014_shared_rate_limits', '0013_code_keyword_field', '0012_judge_cache', '0011_evaluation_runs', '0010_recall_outcomes', '0009_keyword_term_cap', '0008_keyword_postings', '0007_hybrid_recall', '0006_billing', '0004_reference_pattern_ids', '0003_fast_recall', '0002_pattern_counts', '0001_init'],
      current: null,
      pending: ['0001_init', '0002_pattern_counts', '0003_fast_recall', '0004_reference_pattern_ids', '0006_billing', '0007_hybrid_recall', '0008_keyword_postings', '0009_keyword_term_cap', '0010_recall_outcomes', '0011_evaluation_runs', '0012_judge_cache', '0013_code_keyword_field', '0014_shared_rate_limits'],
    });
    const tables = await adminQuery("SELECT to_regclass('patterns')::text AS t", [], db.url);
    expect(tables.rows[0].t).toBeNull();

    const upJson = await cli(['migrate', 'up', '--to', '0001_init']);
    expect(JSON.parse(upJson.stdout)).toEqual({ direction: 'up', applied: ['0001_init'], current: '0001_init', pending: ['0002_pattern_counts', '0003_fast_recall', '0004_reference_pattern_ids', '0006_billing', '0007_hybrid_recall', '0008_keyword_postings', '0009_keyword_term_cap', '0010_recall_outcomes', '0011_evaluation_runs', '0012_judge_cache', '0013_code_keyword_field', '0014_shared_rate_limits'] });
  });

  it('up --dry-run prints the pending SQL and applies nothing; status --check fails while anything is pending', async () => {
    useDatabase(db.url);
    await cli(['migrate', 'down', '--to', '0', '--yes']);
    const pendingCheck = await cli(['migrate', 'status', '--check']);
    expect(pendingCheck.code).toBe(1);
    expect(JSON.parse(pendingCheck.stdout).pending).toContain('0001_init');

    const plan = await cli(['migrate', 'up', '--dry-run'], { tty: true });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/^-- 0001_init \(up\)\n/);
    expect(plan.stdout).toMatch(/CREATE TABLE/i);
    expect((await adminQuery("SELECT to_regclass('patterns')::text AS t", [], db.url)).rows[0].t).toBeNull();
    const planJson = JSON.parse((await cli(['migrate', 'up', '--dry-run', '--to', '0001'])).stdout) as { pending: { label: string; sql: string }[] };
    expect(planJson.pending.map((p) => p.label)).toEqual(['0001_init']);

    await cli(['migrate', 'up']);
    const upToDate = await cli(['migrate', 'status', '--check']);
    expect(upToDate.code).toBe(0);
    expect((await cli(['migrate', 'up', '--dry-run'], { tty: true })).stdout).toMatch(/nothing to apply/);
  });

  it('down refuses without --yes when there is no terminal to ask on (exit 2), and reverts nothing', async () => {
    useDatabase(db.url);
    await cli(['migrate', 'up']);
    const res = await cli(['migrate', 'down']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/refusing to revert the newest applied migration without confirmation: pass --yes/);
    expect(JSON.parse((await cli(['migrate', 'status'])).stdout).pending).toEqual([]);
  });

  it('an unknown revision is a usage error (exit 2)', async () => {
    useDatabase(db.url);
    const res = await cli(['migrate', 'down', '--to', '0042', '--yes']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/unknown revision "0042"/);
  });

  it('needs SERVICE_DATABASE_URL (exit 2)', async () => {
    useDatabase(undefined);
    const res = await cli(['migrate', 'up']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/SERVICE_DATABASE_URL: required for `service migrate`/);
  });

  it('fails with exit 1 and names the server when it cannot connect', async () => {
    useDatabase('postgres://postgres:secret-pw@127.0.0.1:1/nowhere');
    process.env.SERVICE_DB_CONNECT_TIMEOUT_MS = '2000';
    const res = await cli(['migrate', 'status']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cannot connect to PostgreSQL at 127\.0\.0\.1:1\/nowhere/);
    expect(res.stderr).not.toContain('secret-pw');
  });
});
