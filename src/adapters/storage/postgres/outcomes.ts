import type { OutcomeEvidence, OutcomeReport, OutcomeSource, QuantisedVector, RecallTrace } from '../../../core/outcome-types.js';
import { isRecallId, OUTCOME_EVIDENCE_PER_PATTERN } from '../../../core/recall-trace.js';
import { idFromPatternKey, type Scope } from '../../../core/types.js';
import type { OutcomeReportResult, OutcomeRepository } from '../../../ports/storage.js';
import type { Db, Queryer } from './db.js';
import { iso } from './rows.js';

/**
 * Recall traces and outcomes (docs/behavior.md "Outcomes"), migration 0010. Traces are inserted
 * by the recall's own bookkeeping statement (recall-record.ts, global.ts); this repository
 * reports, reads and purges.
 */

/** The trace insert's columns after the scope ($1, $2), as the recall statements bind them. */
export function traceValues(t: RecallTrace | null | undefined): unknown[] {
  if (!t) return [null, null, null, null, null, null, null];
  const v = t.query_vector;
  return [
    t.recall_id, t.at, t.query, t.query_normalized,
    v ? Buffer.from(v.values.buffer, v.values.byteOffset, v.values.byteLength) : null, v ? v.scale : null, t.pattern_keys,
  ];
}

/** An INSERT of one trace from seven placeholders starting at `$first`; inserts nothing when the id is null. */
export function traceInsertSql(first: number): string {
  const p = (i: number) => `$${first + i}`;
  return `INSERT INTO recall_traces (tenant_id, project_id, recall_id, at, query, query_normalized, query_vector, vector_scale, pattern_keys)
  SELECT $1, $2, ${p(0)}::text, ${p(1)}::timestamptz, ${p(2)}::text, ${p(3)}::text, ${p(4)}::bytea, ${p(5)}::real, ${p(6)}::text[]
  WHERE ${p(0)}::text IS NOT NULL
  ON CONFLICT (tenant_id, project_id, recall_id) DO NOTHING`;
}

interface EvidenceRow {
  pattern_id: string;
  recall_id: string;
  pattern_key: string;
  passed: boolean;
  score: number | null;
  detail: string | null;
  source: OutcomeSource | null;
  at: Date;
  query: string;
  query_normalized: string;
  query_vector: Buffer | null;
  vector_scale: number | null;
}

interface TraceRow {
  recall_id: string;
  at: Date;
  query: string;
  query_normalized: string;
  query_vector: Buffer | null;
  vector_scale: number | null;
  pattern_keys: string[];
}

function vectorOf(bytes: Buffer | null, scale: number | null): QuantisedVector | null {
  if (bytes === null) return null;
  return { values: new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength).slice(), scale: scale ?? 0 };
}

function rowToTrace(r: TraceRow): RecallTrace {
  return {
    recall_id: r.recall_id, at: iso(r.at), query: r.query, query_normalized: r.query_normalized,
    query_vector: vectorOf(r.query_vector, r.vector_scale), pattern_keys: r.pattern_keys,
  };
}

function rowToEvidence(r: EvidenceRow): OutcomeEvidence {
  return {
    recall_id: r.recall_id, pattern_key: r.pattern_key, passed: r.passed, score: r.score, detail: r.detail, source: r.source,
    at: iso(r.at), pattern_id: r.pattern_id, query: r.query, query_normalized: r.query_normalized,
    query_vector: vectorOf(r.query_vector, r.vector_scale),
  };
}

const EVIDENCE_SQL = `SELECT p.id AS pattern_id, o.recall_id, o.pattern_key, o.passed, o.score, o.detail, o.source, o.at,
  t.query, t.query_normalized, t.query_vector, t.vector_scale
FROM unnest($3::text[]) AS p(id)
CROSS JOIN LATERAL (
  SELECT recall_id, pattern_key, passed, score, detail, source, at FROM recall_outcomes
  WHERE tenant_id = $1 AND project_id = $2 AND pattern_id = p.id
  ORDER BY at DESC, recall_id DESC LIMIT $4
) o
JOIN recall_traces t ON t.tenant_id = $1 AND t.project_id = $2 AND t.recall_id = o.recall_id
ORDER BY p.id, o.at DESC, o.recall_id DESC`;

const REPORT_SQL = `WITH trace AS (
  SELECT pattern_keys FROM recall_traces WHERE tenant_id = $1 AND project_id = $2 AND recall_id = $3
), allowed AS (
  SELECT 1 FROM trace WHERE $5::text = ANY(trace.pattern_keys)
    AND EXISTS (SELECT 1 FROM patterns WHERE tenant_id = $1 AND project_id = $2 AND id = $4)
), written AS (
  INSERT INTO recall_outcomes (tenant_id, project_id, recall_id, pattern_id, pattern_key, passed, score, detail, source, at)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM allowed
  ON CONFLICT (tenant_id, project_id, recall_id, pattern_id) DO UPDATE
    SET passed = EXCLUDED.passed, score = EXCLUDED.score, detail = EXCLUDED.detail, source = EXCLUDED.source, at = EXCLUDED.at
  RETURNING (xmax <> 0) AS replaced
), credited AS (
  UPDATE patterns SET success_score = LEAST(10, GREATEST(0, success_score + $11::double precision))
  WHERE tenant_id = $1 AND project_id = $2 AND id = $4 AND $11::double precision <> 0 AND EXISTS (SELECT 1 FROM written WHERE NOT replaced)
  RETURNING 1
)
SELECT (SELECT count(*) FROM trace)::int AS traces, (SELECT replaced FROM written) AS replaced`;

const OUTCOME_INSERT_SQL = `INSERT INTO recall_outcomes (tenant_id, project_id, recall_id, pattern_id, pattern_key, passed, score, detail, source, at)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
WHERE EXISTS (SELECT 1 FROM patterns WHERE tenant_id = $1 AND project_id = $2 AND id = $4)
ON CONFLICT (tenant_id, project_id, recall_id, pattern_id) DO NOTHING`;

function outcomeValues(scope: Scope, o: OutcomeReport, patternId: string): unknown[] {
  return [scope.tenant_id, scope.project_id, o.recall_id, patternId, o.pattern_key, o.passed, o.score, o.detail, o.source, o.at];
}

/** How long a "yes" from hasAny is believed without asking again (a purge may have emptied the scope). */
const HAS_ANY_TTL_MS = 2_000;

export function createOutcomeRepository(db: Db): OutcomeRepository {
  // hasAny runs before ranking on every recall. Only a "yes" is kept for a moment: a stale
  // "yes" costs one evidenceFor that finds nothing, but a stale "no" would hide an outcome
  // another process just stored (an agent re-asking right after reporting a failure must not
  // get the failing pattern again), so "no" is asked anew on every recall (an index probe).
  const known = new Map<string, { until: number }>();
  const keyOf = (scope: Scope) => `${scope.tenant_id}/${scope.project_id}`;

  async function evidence(scope: Scope, ids: string[], n: number, operation: string): Promise<Map<string, OutcomeEvidence[]>> {
    const out = new Map<string, OutcomeEvidence[]>();
    if (ids.length === 0 || !(n > 0)) return out;
    const res = await db.query<EvidenceRow>(EVIDENCE_SQL, [scope.tenant_id, scope.project_id, [...new Set(ids)], Math.floor(n)], operation, true);
    for (const r of res.rows) {
      let list = out.get(r.pattern_id);
      if (!list) out.set(r.pattern_id, (list = []));
      list.push(rowToEvidence(r));
    }
    return out;
  }

  return {
    async report(scope, o, opts = {}) {
      const patternId = idFromPatternKey(o.pattern_key);
      if (!isRecallId(o.recall_id)) return 'unknown_recall';
      if (patternId === null) {
        return (await this.getTrace(scope, o.recall_id)) ? 'not_a_match' : 'unknown_recall';
      }
      const res = await db.query<{ traces: number; replaced: boolean | null }>(
        REPORT_SQL, [...outcomeValues(scope, o, patternId), opts.credit ?? 0], 'outcomes.report',
      );
      const { traces, replaced } = res.rows[0];
      if (traces === 0) return 'unknown_recall';
      if (replaced === null) return 'not_a_match';
      known.set(keyOf(scope), { until: Date.now() + HAS_ANY_TTL_MS });
      const result: OutcomeReportResult = replaced ? 'replaced' : 'stored';
      return result;
    },

    async getTrace(scope, recallId) {
      if (!isRecallId(recallId)) return null;
      const res = await db.query<TraceRow>(
        `SELECT recall_id, at, query, query_normalized, query_vector, vector_scale, pattern_keys FROM recall_traces
         WHERE tenant_id = $1 AND project_id = $2 AND recall_id = $3`,
        [scope.tenant_id, scope.project_id, recallId],
        'outcomes.getTrace',
      );
      return res.rows.length ? rowToTrace(res.rows[0]) : null;
    },

    evidenceFor(scope, patternIds, perPattern = OUTCOME_EVIDENCE_PER_PATTERN) {
      return evidence(scope, patternIds, perPattern, 'outcomes.evidenceFor');
    },

    async hasAny(scope) {
      const key = keyOf(scope);
      const cached = known.get(key);
      if (cached && cached.until > Date.now()) return true;
      const res = await db.query<{ any: boolean }>(
        'SELECT EXISTS (SELECT 1 FROM recall_outcomes WHERE tenant_id = $1 AND project_id = $2) AS any',
        [scope.tenant_id, scope.project_id],
        'outcomes.hasAny',
        true,
      );
      const any = res.rows[0].any;
      if (any) known.set(key, { until: Date.now() + HAS_ANY_TTL_MS });
      else known.delete(key);
      return any;
    },

    async listForPattern(scope, patternId, page) {
      return (await evidence(scope, [patternId], page.limit, 'outcomes.listForPattern')).get(patternId) ?? [];
    },

    async purgeBefore(scope, before) {
      known.delete(keyOf(scope));
      const res = await db.query<{ outcomes: number; traces: number }>(
        `WITH gone_outcomes AS (
           DELETE FROM recall_outcomes o WHERE o.tenant_id = $1 AND o.project_id = $2 AND (o.at < $3 OR EXISTS (
             SELECT 1 FROM recall_traces t WHERE t.tenant_id = $1 AND t.project_id = $2 AND t.recall_id = o.recall_id AND t.at < $3))
           RETURNING 1
         ), gone_traces AS (
           DELETE FROM recall_traces WHERE tenant_id = $1 AND project_id = $2 AND at < $3 RETURNING 1
         )
         SELECT (SELECT count(*) FROM gone_outcomes)::int AS outcomes, (SELECT count(*) FROM gone_traces)::int AS traces`,
        [scope.tenant_id, scope.project_id, before],
        'outcomes.purge',
      );
      return res.rows[0];
    },

    async *iterate(scope) {
      let after: { at: Date; id: string } | null = null;
      for (;;) {
        const res: { rows: (TraceRow & { outcomes: EvidenceRow[] })[] } = await db.query(
          `SELECT t.recall_id, t.at, t.query, t.query_normalized, t.query_vector, t.vector_scale, t.pattern_keys,
             (SELECT json_agg(json_build_object('recall_id', o.recall_id, 'pattern_key', o.pattern_key, 'passed', o.passed,
               'score', o.score, 'detail', o.detail, 'source', o.source, 'at', o.at) ORDER BY o.at, o.pattern_id)
              FROM recall_outcomes o WHERE o.tenant_id = $1 AND o.project_id = $2 AND o.recall_id = t.recall_id) AS outcomes
           FROM recall_traces t
           WHERE t.tenant_id = $1 AND t.project_id = $2
             AND EXISTS (SELECT 1 FROM recall_outcomes o WHERE o.tenant_id = $1 AND o.project_id = $2 AND o.recall_id = t.recall_id)
             AND ($3::timestamptz IS NULL OR (t.at, t.recall_id) > ($3::timestamptz, $4::text))
           ORDER BY t.at, t.recall_id LIMIT 500`,
          [scope.tenant_id, scope.project_id, after?.at ?? null, after?.id ?? null],
          'outcomes.iterate',
        );
        for (const r of res.rows) {
          const outcomes: OutcomeReport[] = r.outcomes.map((o) => ({
            recall_id: o.recall_id, pattern_key: o.pattern_key, passed: o.passed, score: o.score, detail: o.detail, source: o.source,
            at: new Date(o.at as unknown as string).toISOString(),
          }));
          yield { trace: rowToTrace(r), outcomes };
        }
        if (res.rows.length < 500) return;
        const last = res.rows[res.rows.length - 1];
        after = { at: last.at, id: last.recall_id };
      }
    },

    async restore(scope, traced) {
      const t = traced.trace;
      await db.tx('outcomes.restore', async (q: Queryer) => {
        await q.query('DELETE FROM recall_traces WHERE tenant_id = $1 AND project_id = $2 AND recall_id = $3', [scope.tenant_id, scope.project_id, t.recall_id]);
        await q.query(traceInsertSql(3), [scope.tenant_id, scope.project_id, ...traceValues(t)]);
        for (const o of traced.outcomes) {
          const patternId = idFromPatternKey(o.pattern_key);
          if (patternId !== null && o.recall_id === t.recall_id) await q.query(OUTCOME_INSERT_SQL, outcomeValues(scope, o, patternId));
        }
      });
      if (traced.outcomes.length > 0) known.delete(keyOf(scope));
    },

    async count(scope) {
      const res = await db.query<{ traces: number; outcomes: number }>(
        `SELECT (SELECT count(*) FROM recall_traces WHERE tenant_id = $1 AND project_id = $2)::int AS traces,
                (SELECT count(*) FROM recall_outcomes WHERE tenant_id = $1 AND project_id = $2)::int AS outcomes`,
        [scope.tenant_id, scope.project_id],
        'outcomes.count',
      );
      return res.rows[0];
    },
  };
}
