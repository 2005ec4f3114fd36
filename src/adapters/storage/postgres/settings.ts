import { ValidationError } from '../../../core/errors.js';
import { ID, ID_RULE } from '../../../core/vocabulary.js';
import { isValidRetentionDays, MAX_RETENTION_DAYS, MIN_RETENTION_DAYS } from '../../../core/retention.js';
import type { RollupResponse } from '../../../contracts/analytics.js';
import { ROLLUP_WINDOWS } from '../../../core/roi.js';
import type { ProjectSettingsRepository, RollupRepository } from '../../../ports/storage.js';
import type { Db, Queryer } from './db.js';

/**
 * Rollups live in analytics_rollups (one row per scope and window, replaced on recompute);
 * retention settings in the retention_days columns of projects and tenants (migration 0001).
 */
export function createRollupRepository(db: Db): RollupRepository {
  return {
    async put(scope, rollup) {
      if (!(ROLLUP_WINDOWS as readonly string[]).includes(rollup.window)) throw new ValidationError(`unknown rollup window ${rollup.window}`);
      await db.query(
        `INSERT INTO analytics_rollups (tenant_id, project_id, window_name, computed_at, data)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (tenant_id, project_id, window_name)
         DO UPDATE SET computed_at = EXCLUDED.computed_at, data = EXCLUDED.data`,
        [scope.tenant_id, scope.project_id, rollup.window, rollup.computed_at, JSON.stringify(rollup)],
        'rollups.put',
      );
    },

    async get(scope, window) {
      const res = await db.query<{ data: RollupResponse }>(
        'SELECT data FROM analytics_rollups WHERE tenant_id = $1 AND project_id = $2 AND window_name = $3',
        [scope.tenant_id, scope.project_id, window],
        'rollups.get',
      );
      return res.rows[0]?.data ?? null;
    },
  };
}

function assertDays(days: number | null): void {
  if (days !== null && !isValidRetentionDays(days)) {
    throw new ValidationError('invalid retention_days', [
      { path: 'retention_days', message: `must be a whole number from ${MIN_RETENTION_DAYS} to ${MAX_RETENTION_DAYS}, or null` },
    ]);
  }
}

/**
 * Scopes of the env and dev auth modes have no tenant/project rows; setting a value creates
 * them, the way key creation does (INSERT … ON CONFLICT DO NOTHING never disturbs a row
 * that exists, so DB-mode bootstrap and key creation are unaffected).
 */
async function ensureTenant(q: Queryer, tenantId: string): Promise<void> {
  await q.query('INSERT INTO tenants (id, name) VALUES ($1, $1) ON CONFLICT (id) DO NOTHING', [tenantId]);
}

export function createProjectSettingsRepository(db: Db): ProjectSettingsRepository {
  return {
    async getRetention(scope) {
      const res = await db.query<{ project_days: number | null; tenant_days: number | null }>(
        `SELECT (SELECT retention_days FROM projects WHERE tenant_id = $1 AND id = $2) AS project_days,
                (SELECT retention_days FROM tenants WHERE id = $1) AS tenant_days`,
        [scope.tenant_id, scope.project_id],
        'projects.getRetention',
      );
      const row = res.rows[0];
      return { project_days: row?.project_days ?? null, tenant_days: row?.tenant_days ?? null };
    },

    async setProjectRetention(scope, days, at) {
      assertDays(days);
      await db.tx('projects.setRetention', async (q) => {
        await ensureTenant(q, scope.tenant_id);
        await q.query(
          `INSERT INTO projects (tenant_id, id, name, retention_days, updated_at) VALUES ($1, $2, $2, $3, $4)
           ON CONFLICT (tenant_id, id) DO UPDATE SET retention_days = EXCLUDED.retention_days, updated_at = EXCLUDED.updated_at`,
          [scope.tenant_id, scope.project_id, days, at],
        );
      });
    },

    async setTenantRetention(tenantId, days, at) {
      assertDays(days);
      if (!ID.test(tenantId)) {
        throw new ValidationError('invalid tenant id', [{ path: 'tenant_id', message: `must be ${ID_RULE}` }]);
      }
      await db.query(
        `INSERT INTO tenants (id, name, retention_days, updated_at) VALUES ($1, $1, $2, $3)
         ON CONFLICT (id) DO UPDATE SET retention_days = EXCLUDED.retention_days, updated_at = EXCLUDED.updated_at`,
        [tenantId, days, at],
        'tenants.setRetention',
      );
    },
  };
}
