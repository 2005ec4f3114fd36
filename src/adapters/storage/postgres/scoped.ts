import type { FeedbackCluster, Scope } from '../../../core/types.js';
import type { EvalRepository, FeedbackRepository, MetricsRepository, SkillRepository } from '../../../ports/storage.js';
import type { Db } from './db.js';
import { iso } from './rows.js';
import { SUCCESS_EVAL_SCORE } from '../../../core/roi.js';

/** One eval observation of a pattern. */
export const EVAL_INSERT_SQL = 'INSERT INTO eval_observations (tenant_id, project_id, pattern_id, score, at) VALUES ($1, $2, $3, $4, $5)';

/** Eval observations: one row each, read back per pattern newest first. */
export function createEvalRepository(db: Db): EvalRepository {
  return {
    async add(scope, patternId, score, at) {
      await db.query(
        EVAL_INSERT_SQL,
        [scope.tenant_id, scope.project_id, patternId, score, at],
        'evals.add',
      );
    },

    async recent(scope, patternIds, n) {
      const out = new Map<string, number[]>();
      if (patternIds.length === 0 || n <= 0) return out;
      // One short index walk per pattern (LIMIT n each) rather than ranking every observation
      // of every candidate: recall asks this for up to a hundred candidates on each call.
      const res = await db.query<{ pattern_id: string; score: number }>(
        `SELECT p.id AS pattern_id, e.score
         FROM unnest($3::text[]) WITH ORDINALITY AS p(id, ord)
         CROSS JOIN LATERAL (
           SELECT score, at, id FROM eval_observations
           WHERE tenant_id = $1 AND project_id = $2 AND pattern_id = p.id
           ORDER BY at DESC, id DESC
           LIMIT $4
         ) e
         ORDER BY p.ord, e.at DESC, e.id DESC`,
        [scope.tenant_id, scope.project_id, [...new Set(patternIds)], Math.floor(n)],
        'evals.recent',
      );
      for (const r of res.rows) {
        const list = out.get(r.pattern_id) ?? [];
        list.push(r.score);
        out.set(r.pattern_id, list);
      }
      return out;
    },
  };
}

interface ClusterRow {
  id: string;
  text: string;
  count: number;
  score: number;
  last_seen: Date;
  last_decayed_at: Date | null;
  tasks: string[];
}

export function createFeedbackRepository(db: Db): FeedbackRepository {
  return {
    async list(scope): Promise<FeedbackCluster[]> {
      const res = await db.query<ClusterRow>(
        `SELECT id, text, count, score, last_seen, last_decayed_at, tasks FROM feedback_clusters
         WHERE tenant_id = $1 AND project_id = $2 ORDER BY seq`,
        [scope.tenant_id, scope.project_id],
        'feedback.list',
      );
      return res.rows.map((r) => ({
        id: r.id, text: r.text, count: r.count, score: r.score,
        last_seen: iso(r.last_seen), last_decayed_at: iso(r.last_decayed_at), tasks: r.tasks,
      }));
    },

    async upsert(scope, clusters) {
      if (clusters.length === 0) return;
      await db.tx('feedback.upsert', async (q) => {
        for (const c of clusters) {
          await q.query(
            `INSERT INTO feedback_clusters (tenant_id, project_id, id, text, count, score, last_seen, last_decayed_at, tasks)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text[])
             ON CONFLICT (tenant_id, project_id, id) DO UPDATE SET
               text = EXCLUDED.text, count = EXCLUDED.count, score = EXCLUDED.score, last_seen = EXCLUDED.last_seen,
               last_decayed_at = EXCLUDED.last_decayed_at, tasks = EXCLUDED.tasks`,
            [scope.tenant_id, scope.project_id, c.id, c.text, c.count, c.score, c.last_seen, c.last_decayed_at, c.tasks],
          );
        }
      });
    },

    async remove(scope, ids) {
      if (ids.length === 0) return;
      await db.query(
        'DELETE FROM feedback_clusters WHERE tenant_id = $1 AND project_id = $2 AND id = ANY($3::text[])',
        [scope.tenant_id, scope.project_id, ids],
        'feedback.remove',
      );
    },
  };
}

/** Skill tags; `position` keeps the order they were given in. */
export function createSkillRepository(db: Db): SkillRepository {
  return {
    async set(scope, patternId, skills) {
      const unique = [...new Set(skills)];
      await db.tx('skills.set', async (q) => {
        await q.query('DELETE FROM pattern_skills WHERE tenant_id = $1 AND project_id = $2 AND pattern_id = $3', [
          scope.tenant_id, scope.project_id, patternId,
        ]);
        if (unique.length === 0) return;
        await q.query(
          `INSERT INTO pattern_skills (tenant_id, project_id, pattern_id, skill, position)
           SELECT $1, $2, $3, skill, ord::int FROM unnest($4::text[]) WITH ORDINALITY AS t(skill, ord)`,
          [scope.tenant_id, scope.project_id, patternId, unique],
        );
      });
    },

    async get(scope, patternId) {
      const res = await db.query<{ skill: string }>(
        'SELECT skill FROM pattern_skills WHERE tenant_id = $1 AND project_id = $2 AND pattern_id = $3 ORDER BY position',
        [scope.tenant_id, scope.project_id, patternId],
        'skills.get',
      );
      return res.rows.map((r) => r.skill);
    },

    async search(scope, skills, matchAll) {
      const out = new Map<string, string[]>();
      const wanted = [...new Set(skills)];
      if (wanted.length === 0) return out;
      // Candidates carry at least one wanted tag; with matchAll they must carry every one.
      const res = await db.query<{ pattern_id: string; skills: string[] }>(
        `SELECT pattern_id, array_agg(skill ORDER BY position) AS skills
         FROM pattern_skills
         WHERE tenant_id = $1 AND project_id = $2
           AND pattern_id IN (SELECT pattern_id FROM pattern_skills
                              WHERE tenant_id = $1 AND project_id = $2 AND skill = ANY($3::text[]))
         GROUP BY pattern_id
         HAVING NOT $4::boolean OR array_agg(skill) @> $3::text[]
         ORDER BY pattern_id`,
        [scope.tenant_id, scope.project_id, wanted, matchAll],
        'skills.search',
      );
      for (const r of res.rows) out.set(r.pattern_id, r.skills);
      return out;
    },
  };
}

interface CounterRow {
  runs: string;
  successes: string;
  eval_sum: number;
  recalls: string;
  reusing_recalls: string;
}

/** Counts one POST recall ($1, $2: the scope; `reused`: 1 or 0), shared with recall-record.ts. */
export function recallCounterSql(reused: string): string {
  return `INSERT INTO metrics_counters (tenant_id, project_id, recalls, reusing_recalls) VALUES ($1, $2, 1, ${reused})
   ON CONFLICT (tenant_id, project_id) DO UPDATE SET
     recalls = metrics_counters.recalls + 1, reusing_recalls = metrics_counters.reusing_recalls + ${reused}`;
}

/**
 * Counts one learn run; parameters from runCounterParams (a success at eval_score ≥
 * SUCCESS_EVAL_SCORE, docs/behavior.md "Metrics"). Shared with learn-record.ts.
 */
export const RUN_COUNTER_SQL = `INSERT INTO metrics_counters (tenant_id, project_id, runs, successes, eval_sum) VALUES ($1, $2, 1, $3, $4)
   ON CONFLICT (tenant_id, project_id) DO UPDATE SET
     runs = metrics_counters.runs + 1, successes = metrics_counters.successes + $3,
     eval_sum = metrics_counters.eval_sum + $4`;

export function runCounterParams(scope: Scope, evalScore: number): unknown[] {
  return [scope.tenant_id, scope.project_id, evalScore >= SUCCESS_EVAL_SCORE ? 1 : 0, evalScore];
}

export function createMetricsRepository(db: Db): MetricsRepository {
  return {
    async recordRun(scope, evalScore) {
      await db.query(RUN_COUNTER_SQL, runCounterParams(scope, evalScore), 'metrics.recordRun');
    },

    async recordRecall(scope, reused) {
      await db.query(
        recallCounterSql('$3'),
        [scope.tenant_id, scope.project_id, reused ? 1 : 0],
        'metrics.recordRecall',
      );
    },

    async raiseTo(scope, c) {
      await db.query(
        `INSERT INTO metrics_counters (tenant_id, project_id, runs, successes, eval_sum, recalls, reusing_recalls)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (tenant_id, project_id) DO UPDATE SET
           runs = GREATEST(metrics_counters.runs, EXCLUDED.runs),
           successes = GREATEST(metrics_counters.successes, EXCLUDED.successes),
           eval_sum = GREATEST(metrics_counters.eval_sum, EXCLUDED.eval_sum),
           recalls = GREATEST(metrics_counters.recalls, EXCLUDED.recalls),
           reusing_recalls = GREATEST(metrics_counters.reusing_recalls, EXCLUDED.reusing_recalls)`,
        [scope.tenant_id, scope.project_id, c.runs, c.successes, c.eval_sum, c.recalls, c.reusing_recalls],
        'metrics.raiseTo',
      );
    },

    async get(scope) {
      const res = await db.query<CounterRow>(
        'SELECT runs, successes, eval_sum, recalls, reusing_recalls FROM metrics_counters WHERE tenant_id = $1 AND project_id = $2',
        [scope.tenant_id, scope.project_id],
        'metrics.get',
      );
      const r = res.rows[0];
      if (!r) return { runs: 0, successes: 0, eval_sum: 0, recalls: 0, reusing_recalls: 0 };
      // bigint columns arrive as strings; the counters stay far below 2^53.
      return {
        runs: Number(r.runs), successes: Number(r.successes), eval_sum: r.eval_sum,
        recalls: Number(r.recalls), reusing_recalls: Number(r.reusing_recalls),
      };
    },
  };
}
