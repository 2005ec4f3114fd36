import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliInTty, stripAnsi } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * Irreversible commands are safe by default: without a terminal (or under CI) they refuse
 * unless --yes is given; --dry-run counts without changing anything.
 */
let server: ServerHandle;
let dir: { path: string; remove(): Promise<void> };
const cli = (args: string[], env: Record<string, string | undefined> = {}) => runCli([...args, '--url', server.url], { env });

beforeAll(async () => {
  dir = await tempDir('svc-cli-destructive-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
  for (const task of ['parse a CSV file', 'resize an image']) {
    expect((await cli(['learn', '--task', task, '--code', `// ${task}`, '--eval-score', '8'])).code).toBe(0);
  }
});
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

describe('destructive commands', () => {
  it.each([
    [['aging'], 'refusing to age patterns'],
    [['governance', 'retention', 'apply'], 'refusing to delete the patterns past retention'],
    [['keys', 'revoke', 'k-1'], 'refusing to revoke k-1'],
    [['keys', 'rotate', 'k-1'], 'refusing to rotate k-1'],
  ])('%j refuses without --yes and without a terminal (exit 2), before any request', async (args, message) => {
    for (const env of [{}, { CI: 'true' }]) {
      const res = await cli(args, env);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(message);
      expect(res.stderr).toContain('pass --yes');
    }
  });

  it('governance delete-scope asks on a terminal, and a person who does not say yes deletes nothing', async () => {
    const res = await runCliInTty(['governance', 'delete-scope', '--url', server.url], { answer: { when: 'cannot be undone', keys: 'n\r' } });
    // The question says what a dry run counted just before.
    expect(stripAnsi(res.output)).toContain('Delete all data of this scope? It deletes 2 patterns, 0 jobs, 1 projects; 0 keys revoked. This cannot be undone.');
    expect(res.code).not.toBe(0);
    const metrics = JSON.parse((await cli(['metrics'])).stdout) as { pattern_count: number };
    expect(metrics.pattern_count).toBe(2);
  });

  it('aging asks on a terminal with the counts of a dry run, and "no" changes nothing', async () => {
    const res = await runCliInTty(['aging', '--url', server.url], { answer: { when: 'below 0.1', keys: 'n\r' } });
    expect(stripAnsi(res.output)).toMatch(/Decay the scores of \d+ patterns and permanently delete the 0 that fall below 0\.1 \(2 would remain\)\?/);
    expect(res.code).not.toBe(0);
    const metrics = JSON.parse((await cli(['metrics'])).stdout) as { pattern_count: number };
    expect(metrics.pattern_count).toBe(2);
  });

  it('under CI a terminal is not asked either', async () => {
    const res = await runCliInTty(['aging', '--url', server.url], { env: { CI: 'true' } });
    expect(res.code).toBe(2);
    expect(stripAnsi(res.output)).toContain('refusing to age patterns');
  });

  it('aging --dry-run reports without changing; --yes runs', async () => {
    const dry = await cli(['aging', '--dry-run']);
    expect(dry.code).toBe(0);
    const counted = JSON.parse(dry.stdout) as { aged: number };
    expect(counted).toMatchObject({ pruned: 0, remaining: 2, dry_run: true });
    // Scores decayed by the seconds since learn would be aged: the dry run wrote none of them.
    expect(JSON.parse((await cli(['aging', '--dry-run'])).stdout)).toMatchObject({ aged: counted.aged, dry_run: true });
    const real = await cli(['aging', '--yes']);
    expect(real.code).toBe(0);
    expect(JSON.parse(real.stdout)).toMatchObject({ aged: counted.aged, pruned: 0, remaining: 2, dry_run: false });
  });

  it('governance retention apply --dry-run needs no confirmation', async () => {
    const res = await cli(['governance', 'retention', 'apply', '--dry-run']);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ purged_count: 0, dry_run: true });
  });

  it('governance delete-project and delete-tenant --dry-run count without asking and delete nothing', async () => {
    for (const args of [['governance', 'delete-project', 'default', '--dry-run'], ['governance', 'delete-tenant', 'default', '--dry-run']]) {
      const res = await cli(args);
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ tenant_id: 'default', patterns_deleted: 2, dry_run: true });
    }
    expect((JSON.parse((await cli(['metrics'])).stdout) as { pattern_count: number }).pattern_count).toBe(2);
  });

  it('the retention prompt says how many patterns it would delete (counted by a dry run first)', async () => {
    const expired = JSON.stringify({ task: 'an old export job', code: '// old', eval_score: 6, expires_at: '2020-01-01T00:00:00Z' });
    expect((await runCli(['learn', '--batch', '-', '--url', server.url], { input: expired })).code).toBe(0);
    const res = await runCliInTty(['governance', 'retention', 'apply', '--url', server.url], { answer: { when: 'retention?', keys: 'n\r' } });
    expect(stripAnsi(res.output)).toContain('Permanently delete the 1 pattern past its retention?');
    expect(res.code).toBe(1);
    expect(JSON.parse((await cli(['governance', 'retention', 'apply', '--dry-run'])).stdout)).toEqual({ purged_count: 1, dry_run: true });
  });
});
