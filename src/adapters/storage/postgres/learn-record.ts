import type { Logger } from '../../../ports/observability.js';
import type { Storage } from '../../../ports/storage.js';
import type { Db } from './db.js';
import { ROI_EVENT_INSERT_SQL, roiEventValues, trimAfterAppend } from './global.js';
import { INSERT_PATTERN_SQL, insertPatternParams, REPLACE_PATTERN_SQL, replacePatternParams } from './patterns.js';
import type { PlannerStatistics } from './planner-stats.js';
import { RUN_COUNTER_SQL, runCounterParams } from './scoped.js';
import { lockTenantQuota } from './tenant-quota.js';

// Observations belong to a pattern: one deleted since learn found it gets none (no orphans).
const EVAL_SQL = `INSERT INTO eval_observations (tenant_id, project_id, pattern_id, score, at)
  SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM patterns WHERE tenant_id = $1 AND project_id = $2 AND id = $3)`;

/**
 * A learn's writes in one transaction on one connection: the pattern insert or replacement,
 * its eval observation, the run counter and the ROI event commit together or roll back
 * together, so a failure between them leaves no pattern without its observation. The commit
 * is synchronous (unlike recall's bookkeeping): a learned pattern is never lost.
 *
 * Locks: the pattern row first, the scope's counter row after it, as recall's statement does
 * (recall-record.ts), so a learn and a recall can wait for each other but never deadlock.
 * Concurrent identical learns are serialised before this by the scope lock (withScopeLock).
 * An insert with a tenant quota takes the tenant's quota lock before all of these
 * (tenant-quota.ts): learns in other projects of the tenant hold other scope locks.
 */
export function createLearnRecorder(db: Db, stats: PlannerStatistics, logger: Logger): Storage['recordLearn'] {
  return async (scope, record) => {
    const write = record.pattern;
    const id = write.op === 'keep' ? write.id : write.pattern.id;
    // Built (and the vector checked) before BEGIN: a bad vector costs no transaction.
    const patternStatement =
      write.op === 'insert' ? { sql: INSERT_PATTERN_SQL, params: insertPatternParams(scope, write.pattern, write.vector) }
      : write.op === 'replace' ? { sql: REPLACE_PATTERN_SQL, params: replacePatternParams(scope, write.pattern) }
      : null;
    const { written, eventId } = await db.tx('learn.record', async (q) => {
      await lockTenantQuota(q, scope.tenant_id, record.tenant_quota, write.op === 'insert' ? 1 : 0);
      const res = patternStatement ? await q.query(patternStatement.sql, patternStatement.params) : null;
      await q.query(EVAL_SQL, [scope.tenant_id, scope.project_id, id, record.eval_score, record.at]);
      await q.query(RUN_COUNTER_SQL, runCounterParams(scope, record.eval_score));
      const event = await q.query<{ id: string }>(ROI_EVENT_INSERT_SQL, [scope.tenant_id, scope.project_id, ...roiEventValues(record.event)]);
      return { written: res?.rowCount ?? 0, eventId: event.rows[0].id };
    });
    stats.noteWrites(written);
    await trimAfterAppend(db, logger, scope, eventId);
  };
}
