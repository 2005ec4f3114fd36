import { JUDGE_CACHE_MAX_ENTRIES, type CachedJudgement } from '../../../core/judge-cache-key.js';
import type { JudgeCacheRepository } from '../../../ports/storage.js';
import type { Db } from './db.js';

/** Puts between two prunes of a project: pruning is a range scan, not worth doing per put. */
const PRUNE_EVERY = 100;

/** The judge cache in judge_cache (migration 0012): one row per project and key. */
export function createJudgeCacheRepository(db: Db): JudgeCacheRepository {
  let puts = 0;
  return {
    async get(scope, key) {
      const res = await db.query<{ judgement: CachedJudgement }>(
        'SELECT judgement FROM judge_cache WHERE tenant_id = $1 AND project_id = $2 AND cache_key = $3',
        [scope.tenant_id, scope.project_id, key],
        'judgeCache.get',
      );
      return res.rows[0]?.judgement ?? null;
    },

    async put(scope, key, judgement) {
      await db.query(
        `INSERT INTO judge_cache (tenant_id, project_id, cache_key, judgement, stored_at) VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (tenant_id, project_id, cache_key) DO UPDATE SET judgement = EXCLUDED.judgement, stored_at = EXCLUDED.stored_at`,
        [scope.tenant_id, scope.project_id, key, JSON.stringify(judgement)],
        'judgeCache.put',
      );
      if (++puts % PRUNE_EVERY !== 0) return;
      await db.query(
        `DELETE FROM judge_cache WHERE tenant_id = $1 AND project_id = $2 AND cache_key IN (
           SELECT cache_key FROM judge_cache WHERE tenant_id = $1 AND project_id = $2
           ORDER BY stored_at DESC OFFSET $3)`,
        [scope.tenant_id, scope.project_id, JUDGE_CACHE_MAX_ENTRIES],
        'judgeCache.prune',
      );
    },
  };
}
