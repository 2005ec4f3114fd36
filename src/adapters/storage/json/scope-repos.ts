import { ValidationError } from '../../../core/errors.js';
import type { MetricsCounters } from '../../../core/types.js';
import type {
  AnalyticsRepository, EvalRepository, FeedbackRepository, MetricsRepository, SkillRepository,
} from '../../../ports/storage.js';
import { assertPatternId, isPatternId } from './ids.js';
import type { ScopeRegistry } from './scope-registry.js';

const ZERO_METRICS: MetricsCounters = { runs: 0, successes: 0, eval_sum: 0, recalls: 0, reusing_recalls: 0 };

/** Observations and tags belong to a pattern: for an absent pattern they are not stored (no orphans). */
export function createEvalRepository(registry: ScopeRegistry): EvalRepository {
  return {
    async add(scope, patternId, score, at) {
      assertPatternId(patternId);
      if (!Number.isFinite(score)) throw new ValidationError('eval score must be a finite number');
      const store = registry.forRead(scope);
      if (!store) return;
      await store.mutate(() => (store.state.patterns.has(patternId) ? { op: { op: 'eval', id: patternId, s: score, at } } : null));
    },
    async recent(scope, patternIds, n) {
      const out = new Map<string, number[]>();
      const store = registry.forRead(scope);
      if (!store) return out;
      for (const id of patternIds) {
        const scores = isPatternId(id) ? store.state.recentEvals(id, Math.floor(n)) : undefined;
        if (scores) out.set(id, scores);
      }
      return out;
    },
  };
}

export function createFeedbackRepository(registry: ScopeRegistry): FeedbackRepository {
  return {
    async list(scope) {
      const store = registry.forRead(scope);
      return store ? [...store.state.feedback.values()].map((c) => ({ ...c, tasks: [...c.tasks] })) : [];
    },
    async upsert(scope, clusters) {
      if (clusters.length === 0) return;
      for (const c of clusters) {
        if (typeof c?.id !== 'string' || c.id === '') throw new ValidationError('feedback cluster needs an id');
      }
      const store = registry.forWrite(scope);
      const copies = clusters.map((c) => ({ ...c, tasks: [...c.tasks] }));
      await store.mutate(() => ({ op: { op: 'fb', c: copies } }));
    },
    async remove(scope, ids) {
      const store = registry.forRead(scope);
      if (!store) return;
      await store.mutate(() => {
        const present = [...new Set(ids)].filter((id) => store.state.feedback.has(id));
        return present.length === 0 ? null : { op: { op: 'fbdel', ids: present } };
      });
    },
  };
}

export function createSkillRepository(registry: ScopeRegistry): SkillRepository {
  return {
    async set(scope, patternId, skills) {
      assertPatternId(patternId);
      const store = registry.forRead(scope);
      if (!store) return;
      const tags = [...new Set(skills)];
      await store.mutate(() => {
        const s = store.state;
        if (tags.length === 0) return s.skills.has(patternId) ? { op: { op: 'skills', id: patternId, k: [] } } : null;
        return s.patterns.has(patternId) ? { op: { op: 'skills', id: patternId, k: tags } } : null;
      });
    },
    async get(scope, patternId) {
      const tags = isPatternId(patternId) ? registry.forRead(scope)?.state.skills.get(patternId) : undefined;
      return tags ? [...tags] : [];
    },
    async search(scope, skills, matchAll) {
      const out = new Map<string, string[]>();
      const store = registry.forRead(scope);
      const wanted = [...new Set(skills)];
      if (!store || wanted.length === 0) return out;
      const ids = [...store.state.skills.keys()].sort();
      for (const id of ids) {
        const tags = store.state.skills.get(id)!;
        const hit = matchAll ? wanted.every((t) => tags.includes(t)) : wanted.some((t) => tags.includes(t));
        if (hit) out.set(id, [...tags]);
      }
      return out;
    },
  };
}

export function createMetricsRepository(registry: ScopeRegistry): MetricsRepository {
  return {
    async recordRun(scope, evalScore) {
      if (!Number.isFinite(evalScore)) throw new ValidationError('eval score must be a finite number');
      const store = registry.forWrite(scope);
      await store.mutate(() => ({ op: { op: 'run', s: evalScore } }));
    },
    async recordRecall(scope, reused) {
      const store = registry.forWrite(scope);
      await store.mutate(() => ({ op: { op: 'recall', r: reused === true } }));
    },
    async raiseTo(scope, counters) {
      const store = registry.forWrite(scope);
      await store.mutate(() => ({ op: { op: 'raise', m: { ...counters } } }));
    },
    async get(scope) {
      return { ...(registry.forRead(scope)?.state.metrics ?? ZERO_METRICS) };
    },
  };
}

export function createAnalyticsRepository(registry: ScopeRegistry): AnalyticsRepository {
  return {
    async append(scope, event) {
      const store = registry.forWrite(scope);
      const copy = { ...event };
      await store.mutate(() => ({ op: { op: 'roi', e: copy } }));
    },
    async list(scope, opts) {
      let sinceMs: number | undefined;
      if (opts.since !== undefined) {
        sinceMs = Date.parse(opts.since);
        if (Number.isNaN(sinceMs)) throw new ValidationError('since must be an ISO-8601 time', [{ path: 'since', message: 'not a time' }]);
      }
      const store = registry.forRead(scope);
      const limit = Math.floor(opts.limit);
      if (!store || !(limit > 0)) return [];
      return store.state.roiEvents(sinceMs, limit);
    },
  };
}
