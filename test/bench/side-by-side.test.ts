/**
 * `npm run bench -- --http --side-by-side` end to end on a small store: two builds (here this
 * one twice) served at once, each on its own copy of the filled database, every round
 * reported for both, and no database left behind. What it measures is not checked (a
 * benchmark, not a timed test); that it runs, and cleans up, is.
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../bench/args.js';
import { parseHttpArgs, type HttpBenchOptions } from '../../bench/http/options.js';
import { runSideBySide } from '../../bench/http/side-by-side.js';
import { adminQuery, requirePostgres } from '../support/pg.js';

const hasPg = await requirePostgres('side-by-side benchmark');
const built = existsSync(join(repoRoot(), 'dist', 'commands', 'main.js'));
if (!built) {
  if (process.env.CI && process.env.CI !== 'false') throw new Error('dist/ is missing: `npm test` builds it first');
  console.warn('\n[skip] side-by-side benchmark: run `npm run build` first (it spawns bin/service.js).\n');
}

async function benchDatabases(): Promise<string[]> {
  const res = await adminQuery("SELECT datname FROM pg_database WHERE datname LIKE 'service\\_bench\\_%' ORDER BY datname");
  return res.rows.map((r: { datname: string }) => r.datname);
}

describe.skipIf(!hasPg || !built)('HTTP benchmark, side by side (PostgreSQL)', () => {
  it('serves the builds at once, reports each round for each, and drops every database it made', async () => {
    const o = parseHttpArgs([
      '--side-by-side', '--storage', 'postgres', '--compare', repoRoot(), '--sizes', '300', '--connections', '2',
      '--scenarios', 'recall-get', '--duration', '1', '--rounds', '2', '--corpus', 'zipfian',
    ]) as HttpBenchOptions;
    const before = await benchDatabases();
    const result = await runSideBySide(o, 300, () => undefined);
    const other = basename(repoRoot());
    expect(result.rows.map((r) => r.build)).toEqual(['this (round 1)', `${other} (round 1)`, 'this (round 2)', `${other} (round 2)`]);
    for (const row of result.rows) {
      expect(row.scenario).toBe('recall-get');
      expect(row.requests).toBeGreaterThan(0);
      expect(row.non2xx).toBe(0);
      expect(row.errors).toBe(0);
      expect(Number.isFinite(row.cpuMsPerRequest)).toBe(true);
      expect(Number.isFinite(row.pgCpuMsPerRequest)).toBe(true);
    }
    expect(result.differences).toHaveLength(1);
    expect(result.differences[0]).toMatchObject({ scenario: 'recall-get', connections: 2, build: other });
    expect(result.differences[0].msPerRequest).toHaveLength(2);
    expect(await benchDatabases()).toEqual(before);
  }, 240_000);
});
