import type { Logger } from '../../../ports/observability.js';
import type { Storage } from '../../../ports/storage.js';
import type { Db } from './db.js';
import { roiEventValues, trimAfterAppend } from './global.js';
import { reuseUpdateSql } from './patterns.js';
import type { PlannerStatistics } from './planner-stats.js';
import { recallCounterSql } from './scoped.js';

/**
 * A POST recall's three writes (reuse bumps, the recall counter, the ROI event) as one
 * statement: one round trip and one commit instead of three, and all or nothing. Data-modifying
 * CTEs always run, whether or not the outer query reads them.
 */
export function createRecallRecorder(db: Db, stats: PlannerStatistics, logger: Logger): Storage['recordRecall'] {
  const sql = `WITH reuse AS (
  ${reuseUpdateSql('$3', '$4', '$5')}
  RETURNING 1
), counters AS (
  ${recallCounterSql('$6')}
  RETURNING 1
)
INSERT INTO roi_events (tenant_id, project_id, at, kind, data) VALUES ($1, $2, $7, $8, $9)
RETURNING id, (SELECT count(*) FROM reuse)::int AS reused`;

  return async (scope, record) => {
    const res = await db.query<{ id: string; reused: number }>(
      sql,
      [
        scope.tenant_id, scope.project_id, [...new Set(record.reused_ids)], record.bonus, record.at, record.reused ? 1 : 0,
        ...roiEventValues(record.event),
      ],
      'recall.record',
    );
    const row = res.rows[0];
    stats.noteWrites(row.reused);
    await trimAfterAppend(db, logger, scope, row.id);
  };
}
