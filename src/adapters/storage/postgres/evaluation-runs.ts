import type { EvaluationRun, RunCase } from '../../../contracts/evaluations.js';
import type { EvaluationRunRepository } from '../../../ports/evaluation-runs.js';
import type { Db } from './db.js';

const SCOPE = 'tenant_id = $1 AND project_id = $2';

/** Evaluation runs (migration 0011): filter columns plus the wire form as jsonb. */
export function createEvaluationRunRepository(db: Db): EvaluationRunRepository {
  return {
    async putRuns(scope, runs) {
      if (runs.length === 0) return;
      await db.tx('evaluationRuns.put', async (q) => {
        // Un-blessing first: the one-baseline-per-label index must hold after every statement.
        const ordered = [...runs].sort((a, b) => Number(a.blessed) - Number(b.blessed));
        for (const r of ordered) {
          await q.query(
            `INSERT INTO evaluation_runs (tenant_id, project_id, id, created_at, label, branch, status, blessed, body)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)
             ON CONFLICT (tenant_id, project_id, id) DO UPDATE SET
               label = EXCLUDED.label, branch = EXCLUDED.branch, status = EXCLUDED.status,
               blessed = EXCLUDED.blessed, body = EXCLUDED.body`,
            [scope.tenant_id, scope.project_id, r.id, r.created_at, r.label, r.git.branch, r.status, r.blessed, JSON.stringify(r)],
          );
        }
      });
    },

    async getRun(scope, id) {
      const res = await db.query<{ body: EvaluationRun }>(`SELECT body FROM evaluation_runs WHERE ${SCOPE} AND id = $3`, [scope.tenant_id, scope.project_id, id], 'evaluationRuns.get');
      return res.rows[0]?.body ?? null;
    },

    async listRuns(scope, f) {
      const limit = Math.floor(f.limit);
      if (!(limit > 0)) return [];
      const res = await db.query<{ body: EvaluationRun }>(
        `SELECT body FROM evaluation_runs
         WHERE ${SCOPE}
           AND ($3::text IS NULL OR label = $3) AND ($4::text IS NULL OR branch = $4)
           AND ($5::text IS NULL OR status = $5) AND ($6::boolean IS NULL OR blessed = $6)
           AND ($7::timestamptz IS NULL OR created_at < $7) AND ($8::text IS NULL OR id < $8)
         ORDER BY id DESC LIMIT $9`,
        [scope.tenant_id, scope.project_id, f.label ?? null, f.branch ?? null, f.status ?? null, f.blessed ?? null, f.created_before ?? null, f.before ?? null, limit],
        'evaluationRuns.list',
      );
      return res.rows.map((r) => r.body);
    },

    async putCase(scope, runId, c) {
      const res = await db.query(
        `INSERT INTO evaluation_cases (tenant_id, project_id, run_id, case_id, body)
         SELECT $1, $2, $3, $4, $5::jsonb WHERE EXISTS (SELECT 1 FROM evaluation_runs WHERE ${SCOPE} AND id = $3)
         ON CONFLICT (tenant_id, project_id, run_id, case_id) DO UPDATE SET body = EXCLUDED.body`,
        [scope.tenant_id, scope.project_id, runId, c.case_id, JSON.stringify(c)],
        'evaluationRuns.putCase',
      );
      return (res.rowCount ?? 0) > 0;
    },

    async listCases(scope, runId) {
      const res = await db.query<{ body: RunCase }>(
        `SELECT body FROM evaluation_cases WHERE ${SCOPE} AND run_id = $3 ORDER BY seq`,
        [scope.tenant_id, scope.project_id, runId],
        'evaluationRuns.listCases',
      );
      return res.rows.map((r) => r.body);
    },

    async deleteRuns(scope, ids) {
      if (ids.length === 0) return 0;
      const res = await db.query(`DELETE FROM evaluation_runs WHERE ${SCOPE} AND id = ANY($3::text[])`, [scope.tenant_id, scope.project_id, [...new Set(ids)]], 'evaluationRuns.delete');
      return res.rowCount ?? 0;
    },
  };
}
