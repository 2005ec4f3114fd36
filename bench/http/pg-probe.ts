import pg from 'pg';
import { processCpu } from './proc-cpu.js';

/** Ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */

/** What PostgreSQL itself spent, read before and after a run. */
export interface PgSample {
  /** user + system CPU seconds of each backend serving the database, by pid (from /proc). */
  cpuByPid: Map<number, number>;
  /** Committed plus rolled-back transactions of the database (pg_stat_database). */
  transactions: number;
}

export interface PgProbe {
  sample(): Promise<PgSample>;
  close(): Promise<void>;
}

/**
 * Backends write their statistics at most once a second; a sample taken this long after the
 * load stopped sees every transaction of the run.
 */
export const STATS_SETTLE_MS = 1_500;

/** Waits STATS_SETTLE_MS. */
export const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));

/** CPU seconds and transactions between two samples (a backend new in `after` counts from zero). */
export function pgSpent(before: PgSample, after: PgSample): { cpuSeconds: number; transactions: number } {
  let cpuSeconds = 0;
  for (const [pid, cpu] of after.cpuByPid) cpuSeconds += cpu - (before.cpuByPid.get(pid) ?? 0);
  return { cpuSeconds, transactions: after.transactions - before.transactions };
}

/**
 * PostgreSQL's own cost per request, beside the server's: the server on this machine is the
 * same box, so its backends' CPU can be read from /proc by pid (pg_stat_activity names them).
 * A backend that starts during a run counts from zero, which is right; one that exits takes
 * its time with it (the pools keep theirs open for longer than a run). The probe's own two
 * statements per sample are negligible next to thousands of requests.
 */
export async function openPgProbe(databaseUrl: string): Promise<PgProbe> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const database = client.database;
  return {
    async sample() {
      const backends = await client.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database],
      );
      // Counters are per-snapshot cached within a transaction; each sample is its own statement.
      await client.query('SELECT pg_stat_clear_snapshot()');
      const xacts = await client.query<{ n: string }>(
        'SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = $1', [database],
      );
      return {
        cpuByPid: new Map(backends.rows.map((r) => [r.pid, processCpu(r.pid)])),
        transactions: Number(xacts.rows[0]?.n ?? 0),
      };
    },
    close: () => client.end(),
  };
}
