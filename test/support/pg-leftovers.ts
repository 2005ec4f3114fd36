/**
 * Vitest globalSetup: drops the PostgreSQL test databases that an interrupted earlier run
 * (Ctrl-C, a killed CI job) left behind. Test databases are named `t_<label>_<pid>_<8 hex>`
 * (test/support/pg.ts) after the process that creates them. One is dropped only when
 *  - it was created before this run started (its PG_VERSION file is older), and
 *  - the process named in it is gone,
 * so another run going on at the same time keeps its databases. Process ids only mean
 * something on this machine: a server that is not on loopback is left alone.
 */
import pg from 'pg';
import { PG_ADMIN_URL } from './pg.js';

export const TEST_DATABASE_NAME = /^t_[a-z0-9_]*_([0-9]+)_[0-9a-f]{8}$/;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, owned by someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function onThisMachine(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === '' || host === 'localhost' || host === '::1' || host.startsWith('127.') || host.startsWith('/');
}

/** Drops the leftovers among the test databases created before `runStart`; returns their names. */
export async function dropLeftoverTestDatabases(runStart: Date, adminUrl = PG_ADMIN_URL): Promise<string[]> {
  if (!onThisMachine(adminUrl)) return [];
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch {
    return []; // no server: the PostgreSQL tests say so themselves (requirePostgres)
  }
  try {
    // A database's PG_VERSION file is written when it is created and never again.
    const { rows } = await client.query<{ datname: string; created: Date }>(
      "SELECT datname, (pg_stat_file('base/' || oid || '/PG_VERSION')).modification AS created FROM pg_database WHERE datname LIKE 't\\_%'",
    );
    const dropped: string[] = [];
    for (const { datname, created } of rows) {
      const pid = TEST_DATABASE_NAME.exec(datname)?.[1];
      if (pid === undefined || created >= runStart || processAlive(Number(pid))) continue;
      await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      dropped.push(datname);
    }
    return dropped;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export default async function setup(): Promise<void> {
  const dropped = await dropLeftoverTestDatabases(new Date()).catch((err: Error) => {
    console.warn(`[pg] could not look for leftover test databases: ${err.message}`);
    return [];
  });
  if (dropped.length > 0) console.warn(`[pg] dropped ${dropped.length} test database(s) an interrupted run left behind: ${dropped.join(', ')}`);
}
