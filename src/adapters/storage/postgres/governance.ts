import type { DeletionCounts, DeletionTarget } from '../../../core/governance.js';
import type { DeletionOptions, GovernanceRepository } from '../../../ports/storage.js';
import type { Db, Queryer } from './db.js';

/**
 * Governance deletions in PostgreSQL: the whole cascade is ONE transaction, so a crash or a
 * failed statement leaves the target whole. Every statement selects the target with the same
 * predicate: `$1` tenant, `$2` project or NULL (the whole tenant).
 */

const TARGET = 'tenant_id = $1 AND ($2::text IS NULL OR project_id = $2)';

/** Tables whose rows belong to one project and simply go (patterns carry their vectors inline). */
const SCOPED_TABLES = [
  'eval_observations', 'pattern_skills', 'feedback_clusters', 'metrics_counters', 'roi_events',
  'analytics_rollups', 'pattern_counts', 'recall_outcomes', 'recall_traces',
] as const;

const targetParams = (target: DeletionTarget): unknown[] => [target.tenant_id, target.project_id];

/** Running jobs of the kept operations survive (`$3`: operation names). */
const JOBS_TO_DELETE = `${TARGET} AND NOT (status = 'running' AND operation = ANY($3::text[]))`;

/** The target's projects that hold anything: a settings row, data or keys. */
const PROJECTS_OF_TARGET = `
  SELECT id AS project_id FROM projects WHERE ${TARGET.replace('project_id', 'id')}
  UNION SELECT project_id FROM pattern_counts WHERE ${TARGET} AND n > 0
  UNION SELECT project_id FROM metrics_counters WHERE ${TARGET}
  UNION SELECT project_id FROM feedback_clusters WHERE ${TARGET}
  UNION SELECT project_id FROM analytics_rollups WHERE ${TARGET}
  UNION SELECT project_id FROM jobs WHERE ${TARGET}
  UNION SELECT DISTINCT project_id FROM roi_events WHERE ${TARGET}`;

/** Audit events of the target keep kind, time, scope and actor; their detail and ip go. */
export async function scrubAudit(q: Queryer, target: DeletionTarget): Promise<number> {
  const res = await q.query(
    `UPDATE audit_log SET detail = '{}'::jsonb, ip = NULL
     WHERE ${TARGET} AND (detail <> '{}'::jsonb OR ip IS NOT NULL)`,
    targetParams(target),
  );
  return res.rowCount ?? 0;
}

async function countTarget(q: Queryer, target: DeletionTarget, opts: DeletionOptions): Promise<DeletionCounts> {
  const params = [...targetParams(target), opts.keepRunningOperations];
  const res = await q.query<{ patterns: number; jobs: number; projects: number; keys: number }>(
    `SELECT
       (SELECT coalesce(sum(n), 0)::int FROM pattern_counts WHERE ${TARGET}) AS patterns,
       (SELECT count(*)::int FROM jobs WHERE ${JOBS_TO_DELETE}) AS jobs,
       (SELECT count(*)::int FROM (${PROJECTS_OF_TARGET}) p) AS projects,
       (SELECT count(*)::int FROM api_keys WHERE ${TARGET} AND revoked_at IS NULL) AS keys`,
    params,
  );
  const row = res.rows[0];
  return { patterns_deleted: row.patterns, jobs_deleted: row.jobs, projects_deleted: row.projects, keys_revoked: row.keys };
}

export function createGovernanceRepository(db: Db, onPatternsDeleted: (n: number) => void): GovernanceRepository {
  return {
    countScope(target, opts) {
      return db.tx('governance.count', (q) => countTarget(q, target, opts), 'SET TRANSACTION READ ONLY;', { readOnly: true });
    },

    async deleteScope(target, opts) {
      const counts = await db.tx('governance.delete', async (q) => {
        const params = targetParams(target);
        // Projects are counted before their rows go; the settings rows stay (keys reference them).
        const projects = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${PROJECTS_OF_TARGET}) p`, params);
        const patterns = await q.query(`DELETE FROM patterns WHERE ${TARGET}`, params);
        for (const table of SCOPED_TABLES) await q.query(`DELETE FROM ${table} WHERE ${TARGET}`, params);
        const jobs = await q.query(`DELETE FROM jobs WHERE ${JOBS_TO_DELETE}`, [...params, opts.keepRunningOperations]);
        // Retention settings return to "inherit"; the rows stay because revoked keys point at them.
        await q.query(`UPDATE projects SET retention_days = NULL, updated_at = $3 WHERE ${TARGET.replace('project_id', 'id')} AND retention_days IS NOT NULL`, [...params, opts.at]);
        if (target.project_id === null) {
          await q.query('UPDATE tenants SET retention_days = NULL, updated_at = $2 WHERE id = $1 AND retention_days IS NOT NULL', [target.tenant_id, opts.at]);
          await q.query('DELETE FROM usage_counters WHERE tenant_id = $1', [target.tenant_id]);
        }
        const keys = await q.query(`UPDATE api_keys SET revoked_at = $3 WHERE ${TARGET} AND revoked_at IS NULL`, [...params, opts.at]);
        await scrubAudit(q, target);
        return {
          patterns_deleted: patterns.rowCount ?? 0,
          jobs_deleted: jobs.rowCount ?? 0,
          projects_deleted: projects.rows[0].n,
          keys_revoked: keys.rowCount ?? 0,
        };
      });
      onPatternsDeleted(counts.patterns_deleted);
      return counts;
    },
  };
}
