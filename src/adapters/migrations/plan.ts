import type { Pool } from 'pg';
import { loadMigrations, parseRevision, readMigrationSql, revisionLabel } from './files.js';
import { migrationStatus } from './runner.js';

/** One migration `migrate up` would apply, with the SQL it would run. */
export interface PlannedStep {
  label: string;
  sql: string;
}

/**
 * What `migrate up` (up to `to`) would apply, in order, without applying anything: the
 * pending revisions and their up SQL. Read-only (never creates tables, takes no lock).
 */
export async function planMigrateUp(pool: Pool, opts: { to?: string; dir?: string } = {}): Promise<PlannedStep[]> {
  const migrations = await loadMigrations(opts.dir);
  const target = opts.to === undefined ? Infinity : parseRevision(opts.to, migrations);
  const status = await migrationStatus(pool, { dir: opts.dir });
  const pending = new Set(status.pending);
  const steps: PlannedStep[] = [];
  for (const m of migrations) {
    const label = revisionLabel(m);
    if (m.version > target || !pending.has(label)) continue;
    steps.push({ label, sql: await readMigrationSql(m.upPath) });
  }
  return steps;
}
