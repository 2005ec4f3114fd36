import { setImmediate as nextTurn } from 'node:timers/promises';
import type { QueryResult, QueryResultRow } from 'pg';
import { WorkBudget } from '../../../core/slices.js';
import type { PatternFilter, PatternRecord, Scope, ScoredPattern } from '../../../core/types.js';
import type { PatternRepository } from '../../../ports/storage.js';
import type { Db, Queryer } from './db.js';
import type { PlannerStatistics } from './planner-stats.js';
import { EVAL_INSERT_SQL } from './scoped.js';
import { parseVector, PATTERN_COLUMNS, patternValues, rowToPattern, scopeWhere, scoresFromText, UPDATED_AT_MS, vectorParam, type PatternRow } from './rows.js';
import { lockTenantQuota } from './tenant-quota.js';
import { buildHybridStatement, hybridResult, type HybridRow } from './hybrid-search.js';
import { buildSearchStatement, distanceToSimilarity, type SearchStatement } from './search.js';

const PAGE_SIZE = 500;

/** Rows of a search are turned into candidates in slices (core/slices.ts): there may be thousands. */
const searchBudget = () => new WorkBudget(() => nextTurn());

// Placeholders $4..$18 for the 15 record fields after (tenant_id, project_id, id).
const VALUE_SLOTS = Array.from({ length: 15 }, (_, i) => `$${i + 4}`).join(', ');
const UPDATABLE = PATTERN_COLUMNS.split(', ').slice(1);
const RECORD_SETS = UPDATABLE.map((c, i) => `${c} = $${i + 4}`);

/** Inserts one pattern with its vector; parameters from insertPatternParams. Shared with learn-record.ts. */
export const INSERT_PATTERN_SQL = `INSERT INTO patterns (tenant_id, project_id, id, ${UPDATABLE.join(', ')}, dim, embedding)
   VALUES ($1, $2, $3, ${VALUE_SLOTS}, $19, $20::vector)`;

export function insertPatternParams(scope: Scope, pattern: PatternRecord, vector: Float32Array): unknown[] {
  return [scope.tenant_id, scope.project_id, pattern.id, ...patternValues(pattern), vector.length, vectorParam(vector)];
}

/** Replaces a stored record's fields, vector kept; parameters from replacePatternParams. Shared with learn-record.ts. */
export const REPLACE_PATTERN_SQL = `UPDATE patterns SET ${RECORD_SETS.join(', ')} WHERE tenant_id = $1 AND project_id = $2 AND id = $3`;

export function replacePatternParams(scope: Scope, pattern: PatternRecord): unknown[] {
  return [scope.tenant_id, scope.project_id, pattern.id, ...patternValues(pattern)];
}

/** Removes everything hanging off a pattern (eval observations and skill tags). */
async function deleteDependents(q: Queryer, scope: Scope, ids: string[]): Promise<void> {
  const params = [scope.tenant_id, scope.project_id, ids];
  await q.query('DELETE FROM eval_observations WHERE tenant_id = $1 AND project_id = $2 AND pattern_id = ANY($3::text[])', params);
  await q.query('DELETE FROM pattern_skills WHERE tenant_id = $1 AND project_id = $2 AND pattern_id = ANY($3::text[])', params);
  await q.query('DELETE FROM recall_outcomes WHERE tenant_id = $1 AND project_id = $2 AND pattern_id = ANY($3::text[])', params);
}

/**
 * The reuse bump with the given placeholders for ids, delta and time ($1, $2: the scope), so
 * the recall record statement (recall-record.ts) runs the very same UPDATE. It changes no
 * indexed column, so with the free space migration 0003 keeps on each page it is a HOT update.
 * The rows are locked in id order first (the sort sits below the row locking), whatever plan
 * the UPDATE gets: concurrent recalls of overlapping pages queue, and can never deadlock.
 */
export function reuseUpdateSql(ids: string, delta: string, at: string): string {
  return `UPDATE patterns SET reuse_count = reuse_count + 1, success_score = LEAST(10, success_score + ${delta}), updated_at = ${at}
   FROM (SELECT id FROM patterns WHERE tenant_id = $1 AND project_id = $2 AND id = ANY(${ids}::text[]) ORDER BY id FOR UPDATE) AS locked
   WHERE patterns.tenant_id = $1 AND patterns.project_id = $2 AND patterns.id = locked.id`;
}

/** One round trip when the session's settings suffice, else inside a transaction that sets its own. */
function runSearch<R extends QueryResultRow>(db: Db, operation: string, stmt: SearchStatement): Promise<QueryResult<R>> {
  // Prepared: the generic plan still walks the HNSW index (the ORDER BY … LIMIT shape fixes it).
  if (!stmt.setup) return db.query<R>(stmt.sql, stmt.params, operation, true);
  return db.tx(operation, (q) => q.query<R>(stmt.sql, stmt.params), stmt.setup, { readOnly: true });
}

/** `stats` hears of every write, so the planner's picture of the table stays current. */
export function createPatternRepository(db: Db, stats: PlannerStatistics): PatternRepository {
  return {
    async insert(scope, pattern, vector) {
      await db.query(INSERT_PATTERN_SQL, insertPatternParams(scope, pattern, vector), 'patterns.insert');
      stats.noteWrites(1);
    },

    async get(scope, id) {
      const res = await db.query<PatternRow>(
        `SELECT ${PATTERN_COLUMNS} FROM patterns WHERE tenant_id = $1 AND project_id = $2 AND id = $3`,
        [scope.tenant_id, scope.project_id, id],
        'patterns.get',
      );
      return res.rows.length ? rowToPattern(res.rows[0]) : null;
    },

    async getMany(scope, ids) {
      if (ids.length === 0) return [];
      const res = await db.query<PatternRow>(
        // The sub-select hides the array from the planner, so the generic plan is reused (recall-record.ts).
        `SELECT ${PATTERN_COLUMNS} FROM patterns WHERE tenant_id = $1 AND project_id = $2 AND id = ANY((SELECT $3::text[])::text[])`,
        [scope.tenant_id, scope.project_id, [...new Set(ids)]],
        'patterns.getMany',
        true,
      );
      return res.rows.map(rowToPattern);
    },

    async writeBatch(scope, writes, tenantQuota) {
      const outcome = { written: 0, present: 0 };
      if (writes.length === 0) return outcome;
      // One transaction: a failure at any row rolls back the whole batch.
      await db.tx('patterns.writeBatch', async (q) => {
        outcome.written = outcome.present = 0;
        await lockTenantQuota(q, scope.tenant_id, tenantQuota, writes.filter((w) => !w.replace).length);
        for (const { record, vector, replace } of writes) {
          if (replace) {
            await q.query(
              `UPDATE patterns SET ${RECORD_SETS.join(', ')}, dim = $19, embedding = $20::vector WHERE tenant_id = $1 AND project_id = $2 AND id = $3`,
              [scope.tenant_id, scope.project_id, record.id, ...patternValues(record), vector.length, vectorParam(vector)],
            );
            outcome.written += 1;
            continue;
          }
          // Stored since the import was planned (another run of its job): not this write's.
          const inserted = await q.query(`${INSERT_PATTERN_SQL} ON CONFLICT (tenant_id, project_id, id) DO NOTHING`, insertPatternParams(scope, record, vector));
          if ((inserted.rowCount ?? 0) === 0) {
            outcome.present += 1;
            continue;
          }
          await q.query(
            EVAL_INSERT_SQL,
            [scope.tenant_id, scope.project_id, record.id, record.eval_score, record.updated_at],
          );
          outcome.written += 1;
        }
      });
      stats.noteWrites(outcome.written);
      return outcome;
    },

    async copyIn(scope, patterns) {
      if (patterns.length === 0) return;
      // One transaction: a copy killed mid-batch leaves none of the batch behind.
      await db.tx('patterns.copyIn', async (q) => {
        for (const { record, vector, evals, skills } of patterns) {
          await q.query(INSERT_PATTERN_SQL, insertPatternParams(scope, record, vector));
          if (evals.length > 0) {
            await q.query(
              `INSERT INTO eval_observations (tenant_id, project_id, pattern_id, score, at)
               SELECT $1, $2, $3, score, at FROM unnest($4::float8[], $5::timestamptz[]) AS t(score, at)`,
              [scope.tenant_id, scope.project_id, record.id, evals.map((e) => e.score), evals.map((e) => e.at)],
            );
          }
          const unique = [...new Set(skills)];
          if (unique.length > 0) {
            await q.query(
              `INSERT INTO pattern_skills (tenant_id, project_id, pattern_id, skill, position)
               SELECT $1, $2, $3, skill, ord::int FROM unnest($4::text[]) WITH ORDINALITY AS t(skill, ord)`,
              [scope.tenant_id, scope.project_id, record.id, unique],
            );
          }
        }
      });
      stats.noteWrites(patterns.length);
    },

    async update(scope, pattern, vector) {
      const sets = [...RECORD_SETS];
      const params = replacePatternParams(scope, pattern);
      if (vector) {
        params.push(vector.length, vectorParam(vector));
        sets.push(`dim = $${params.length - 1}`, `embedding = $${params.length}::vector`);
      }
      const res = await db.query(
        `UPDATE patterns SET ${sets.join(', ')} WHERE tenant_id = $1 AND project_id = $2 AND id = $3`,
        params,
        'patterns.update',
      );
      stats.noteWrites(res.rowCount ?? 0);
      return (res.rowCount ?? 0) > 0;
    },

    async delete(scope, id) {
      const deleted = await db.tx('patterns.delete', async (q) => {
        const res = await q.query('DELETE FROM patterns WHERE tenant_id = $1 AND project_id = $2 AND id = $3', [
          scope.tenant_id, scope.project_id, id,
        ]);
        if ((res.rowCount ?? 0) === 0) return false;
        await deleteDependents(q, scope, [id]);
        return true;
      });
      if (deleted) stats.noteWrites(1);
      return deleted;
    },

    async count(scope) {
      // Kept by a trigger (migration 0002): a row lookup, not a scan of the scope.
      const res = await db.query<{ n: number }>(
        'SELECT n::int AS n FROM pattern_counts WHERE tenant_id = $1 AND project_id = $2',
        [scope.tenant_id, scope.project_id],
        'patterns.count',
      );
      return res.rows[0]?.n ?? 0;
    },

    async search(scope, vector, k, filter, evalWindow = 0): Promise<ScoredPattern[]> {
      if (k <= 0) return [];
      const window = Math.max(0, Math.floor(evalWindow));
      const stmt = buildSearchStatement(scope, vector, Math.floor(k), filter, { columns: PATTERN_COLUMNS, evalWindow: window });
      const res = await runSearch<PatternRow & { distance: number; recent_evals?: string | null }>(db, 'patterns.search', stmt);
      return searchBudget().map(res.rows, ({ distance, recent_evals, ...row }) => ({
        pattern: rowToPattern(row),
        similarity: distanceToSimilarity(distance),
        recent_evals: scoresFromText(recent_evals),
      }));
    },

    async hybridCandidates(scope, query) {
      const res = await runSearch<HybridRow>(db, 'patterns.hybridCandidates', buildHybridStatement(scope, query));
      return hybridResult(res.rows, query, searchBudget());
    },

    async sampleVectors(scope, n) {
      const want = Math.floor(n);
      if (!(want > 0)) return [];
      // The ranks where floor(r · n / total) steps up, in id order (the JSON storage's rule):
      // chosen from the ids alone (the primary key, an index-only scan), then only the chosen
      // rows' vectors read; one with a zero vector is skipped, as on JSON.
      const res = await db.query<{ id: string; embedding: string }>(
        `WITH ranked AS (
           SELECT id, row_number() OVER (ORDER BY id) - 1 AS r, count(*) OVER () AS total
           FROM patterns WHERE tenant_id = $1 AND project_id = $2
         ), chosen AS (
           SELECT id FROM ranked
           WHERE r = 0 OR floor(r * $3::float8 / total) <> floor((r - 1) * $3::float8 / total)
           ORDER BY id LIMIT $3
         )
         SELECT p.id, l2_normalize(p.embedding)::text AS embedding FROM chosen c
         JOIN patterns p ON p.tenant_id = $1 AND p.project_id = $2 AND p.id = c.id
         WHERE vector_norm(p.embedding) > 0
         ORDER BY p.id`,
        [scope.tenant_id, scope.project_id, want],
        'patterns.sampleVectors',
      );
      return res.rows.map((r) => ({ id: r.id, vector: parseVector(r.embedding) }));
    },

    async list(scope, { limit, after, filter }) {
      const params: unknown[] = [];
      let where = scopeWhere(scope, filter, params);
      if (after !== null) {
        params.push(after.updated_at, after.id);
        where += ` AND (${UPDATED_AT_MS}, id COLLATE "C") < ($${params.length - 1}::timestamptz, $${params.length})`;
      }
      params.push(limit);
      // No index on updated_at (0003 dropped it to keep reuse updates HOT): the scope's rows are
      // found by the primary key and the newest `limit` kept by a top-N sort.
      const res = await db.query<PatternRow>(
        `SELECT ${PATTERN_COLUMNS} FROM patterns WHERE ${where} ORDER BY ${UPDATED_AT_MS} DESC, id COLLATE "C" DESC LIMIT $${params.length}`,
        params,
        'patterns.list',
      );
      return res.rows.map(rowToPattern);
    },

    iterate(scope, filter) {
      return iteratePatterns(db, scope, filter);
    },

    async recordReuse(scope, ids, delta, at) {
      if (ids.length === 0) return;
      const res = await db.query(
        reuseUpdateSql('$3', '$4', '$5'),
        [scope.tenant_id, scope.project_id, [...new Set(ids)], delta, at],
        'patterns.recordReuse',
      );
      stats.noteWrites(res.rowCount ?? 0);
    },

    async classify(scope, id, classification) {
      // classification is not an indexed column: a HOT update like reuse counting.
      const res = await db.query<PatternRow>(
        `UPDATE patterns SET classification = $4 WHERE tenant_id = $1 AND project_id = $2 AND id = $3 RETURNING ${PATTERN_COLUMNS}`,
        [scope.tenant_id, scope.project_id, id, classification],
        'patterns.classify',
      );
      stats.noteWrites(res.rowCount ?? 0);
      return res.rows.length ? rowToPattern(res.rows[0]) : null;
    },

    async setVector(scope, id, vector) {
      const res = await db.query(
        'UPDATE patterns SET dim = $4, embedding = $5::vector WHERE tenant_id = $1 AND project_id = $2 AND id = $3',
        [scope.tenant_id, scope.project_id, id, vector.length, vectorParam(vector)],
        'patterns.setVector',
      );
      stats.noteWrites(res.rowCount ?? 0);
    },

    async vectors(scope, ids) {
      const out = new Map<string, Float32Array>();
      if (ids.length === 0) return out;
      const res = await db.query<{ id: string; embedding: string }>(
        'SELECT id, embedding::text AS embedding FROM patterns WHERE tenant_id = $1 AND project_id = $2 AND id = ANY($3::text[])',
        [scope.tenant_id, scope.project_id, [...new Set(ids)]],
        'patterns.vectors',
      );
      for (const r of res.rows) out.set(r.id, parseVector(r.embedding));
      return out;
    },

    async listScopes() {
      const res = await db.query<Scope>(
        'SELECT DISTINCT tenant_id, project_id FROM patterns ORDER BY tenant_id, project_id',
        [],
        'patterns.listScopes',
      );
      return res.rows.map((r) => ({ tenant_id: r.tenant_id, project_id: r.project_id }));
    },
  };
}

/**
 * Keyset pagination by id: each page is its own short query, so a slow consumer holds no
 * connection or snapshot open, and rows inserted meanwhile with higher ids are still seen.
 */
async function* iteratePatterns(db: Db, scope: Scope, filter?: PatternFilter): AsyncGenerator<PatternRecord> {
  let after: string | null = null;
  for (;;) {
    const params: unknown[] = [];
    let where = scopeWhere(scope, filter, params);
    if (after !== null) {
      params.push(after);
      where += ` AND id > $${params.length}`;
    }
    params.push(PAGE_SIZE);
    const res = await db.query<PatternRow>(
      `SELECT ${PATTERN_COLUMNS} FROM patterns WHERE ${where} ORDER BY id LIMIT $${params.length}`,
      params,
      'patterns.iterate',
    );
    for (const row of res.rows) yield rowToPattern(row);
    if (res.rows.length < PAGE_SIZE) return;
    after = res.rows[res.rows.length - 1].id;
  }
}
