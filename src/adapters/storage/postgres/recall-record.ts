import type { PatternRecord } from '../../../core/types.js';
import type { Logger } from '../../../ports/observability.js';
import type { Storage } from '../../../ports/storage.js';
import type { Db } from './db.js';
import { ROI_EVENT_INSERT_SQL, roiEventValues, trimAfterAppend } from './global.js';
import { reuseUpdateSql } from './patterns.js';
import type { PlannerStatistics } from './planner-stats.js';
import { PATTERN_COLUMNS, rowToPattern, type PatternRow } from './rows.js';
import { recallCounterSql } from './scoped.js';
import { traceInsertSql, traceValues } from './outcomes.js';

/** The page's columns, all nullable: a recall with an empty page still returns its one row. */
type RecordedRow = { [K in keyof PatternRow]: PatternRow[K] | null } & { event_id: string; reused_rows: number };

const PAGE_COLUMNS = PATTERN_COLUMNS.split(', ').map((c) => `page.${c}`).join(', ');

/**
 * A POST recall in one statement: its page read, its reuse bumps, the recall counter, the
 * ROI event and the recall's trace (docs/behavior.md "Outcomes"). One round trip and one commit instead of five, all or nothing; and every part
 * sees one snapshot, so the page shows the patterns as they were before the bumps.
 * Data-modifying CTEs always run, whether or not the outer query reads them.
 *
 * Concurrency: every POST recall of a scope updates the scope's counter row, and recalls of
 * popular tasks update the same pattern rows; each holds those row locks until its commit.
 * - The statement commits asynchronously (`set_config('synchronous_commit', 'off', true)`:
 *   this statement's implicit transaction only; the commit reads the setting before it is
 *   reset). A commit then releases its locks without waiting for the WAL flush, so the
 *   recalls queued behind it are not serialised on the disk. The price, documented in
 *   docs/operations.md: a PostgreSQL crash (not a service crash) may lose the last fraction of a second
 *   of reuse counts, recall counters and ROI events; never a pattern, which learn and import
 *   still commit synchronously. The database stays consistent either way.
 * - Pattern rows are locked in id order before they are bumped (reuseUpdateSql), and the
 *   counter row last, so two recalls can wait for each other but never deadlock.
 * - The id arrays are read through `(SELECT $n::text[])`, which the planner cannot look into:
 *   a custom plan knows no more than the generic one, so PostgreSQL settles on the generic plan
 *   (planning was 0.2 ms of every POST recall, twice the statement's execution).
 */
export function createRecallRecorder(db: Db, stats: PlannerStatistics, logger: Logger): Storage['recordRecall'] {
  const sql = `WITH page AS (
  SELECT ${PATTERN_COLUMNS} FROM patterns WHERE tenant_id = $1 AND project_id = $2 AND id = ANY((SELECT $10::text[])::text[])
), reuse AS (
  ${reuseUpdateSql('(SELECT $3::text[])', '$4', '$5')}
  RETURNING 1
), counters AS (
  ${recallCounterSql('$6')}
  RETURNING 1
), event AS (
  INSERT INTO roi_events (tenant_id, project_id, at, kind, data) VALUES ($1, $2, $7, $8, $9) RETURNING id
), trace AS (
  ${traceInsertSql(11)}
  RETURNING 1
)
SELECT event.id AS event_id, (SELECT count(*) FROM reuse)::int AS reused_rows, ${PAGE_COLUMNS}
FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit, event LEFT JOIN page ON true`;

  return async (scope, record) => {
    const res = await db.query<RecordedRow>(
      sql,
      [
        scope.tenant_id, scope.project_id, [...new Set(record.reused_ids)], record.bonus, record.at, record.reused ? 1 : 0,
        ...roiEventValues(record.event), [...new Set(record.page_ids)], ...traceValues(record.trace),
      ],
      'recall.record',
      true,
    );
    const first = res.rows[0];
    stats.noteWrites(first.reused_rows);
    await trimAfterAppend(db, logger, scope, first.event_id);
    const page: PatternRecord[] = [];
    for (const { event_id: _event, reused_rows: _reused, ...row } of res.rows) {
      if (row.id !== null) page.push(rowToPattern(row as PatternRow));
    }
    return page;
  };
}

/**
 * A read-only recall's writes in one statement: its ROI event and its trace (docs/behavior.md
 * "Recall" 7, "Outcomes"). Without a trace it is the plain event insert.
 */
export function createLookupRecorder(db: Db, logger: Logger): Storage['recordLookup'] {
  const sql = `WITH event AS (
  ${ROI_EVENT_INSERT_SQL}
), trace AS (
  ${traceInsertSql(6)}
  RETURNING 1
)
SELECT id FROM event`;
  return async (scope, record) => {
    const params = [scope.tenant_id, scope.project_id, ...roiEventValues(record.event)];
    const res = record.trace
      ? await db.query<{ id: string }>(sql, [...params, ...traceValues(record.trace)], 'analytics.lookup', true)
      : await db.query<{ id: string }>(ROI_EVENT_INSERT_SQL, params, 'analytics.append', true);
    await trimAfterAppend(db, logger, scope, res.rows[0].id);
  };
}
