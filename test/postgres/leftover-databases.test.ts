/**
 * An interrupted `npm test` leaves its PostgreSQL test databases behind; the next run's
 * globalSetup (test/support/pg-leftovers.ts, wired in vitest.config.ts) drops those whose
 * creating process is gone and that are older than the run, and nothing else.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { adminQuery, requirePostgres } from '../support/pg.js';
import { dropLeftoverTestDatabases } from '../support/pg-leftovers.js';

const hasPg = await requirePostgres('leftover test databases');

/** The pid of a process that has exited (and, checked, is not reused yet). */
function deadPid(): number {
  for (;;) {
    const pid = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    try {
      process.kill(Number(pid), 0);
    } catch {
      return Number(pid);
    }
  }
}

const hex = () => randomBytes(4).toString('hex');
const exists = async (name: string) => (await adminQuery('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;

describe.skipIf(!hasPg)('leftover test databases', () => {
  const orphan = `t_leftover_${deadPid()}_${hex()}`;
  const ours = `t_leftover_${process.pid}_${hex()}`;
  const foreign = `t_leftover_not_a_test_db`;

  afterAll(async () => {
    for (const name of [orphan, ours, foreign]) await adminQuery(`DROP DATABASE IF EXISTS "${name}"`);
  });

  it('drops a database whose creator is gone once it is older than the run, and keeps the others', async () => {
    for (const name of [orphan, ours, foreign]) await adminQuery(`CREATE DATABASE "${name}"`);

    // A run that started before the orphan was created leaves it alone (it may be that run's).
    expect(await dropLeftoverTestDatabases(new Date(Date.now() - 3_600_000))).not.toContain(orphan);
    expect(await exists(orphan)).toBe(true);

    // The next run (a second later: creation times may be whole seconds) drops it.
    const dropped = await dropLeftoverTestDatabases(new Date(Date.now() + 1000));
    expect(dropped).toContain(orphan);
    expect(await exists(orphan)).toBe(false);
    // Its creator is alive (this process), or it is not named like a test database.
    expect(dropped).not.toContain(ours);
    expect(await exists(ours)).toBe(true);
    expect(await exists(foreign)).toBe(true);
  });

  it('leaves a server that is not on this machine alone (process ids mean nothing there)', async () => {
    expect(await dropLeftoverTestDatabases(new Date(Date.now() + 1000), 'postgres://postgres@db.example.invalid:5432/postgres')).toEqual([]);
  });
});
