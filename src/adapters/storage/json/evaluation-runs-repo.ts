import type { EvaluationRun } from '../../../contracts/evaluations.js';
import type { EvaluationRunRepository, RunFilter } from '../../../ports/evaluation-runs.js';
import type { ScopeRegistry } from './scope-registry.js';

function matches(run: EvaluationRun, f: RunFilter): boolean {
  if (f.label !== undefined && run.label !== f.label) return false;
  if (f.branch !== undefined && run.git.branch !== f.branch) return false;
  if (f.status !== undefined && run.status !== f.status) return false;
  if (f.blessed !== undefined && run.blessed !== f.blessed) return false;
  if (f.created_before !== undefined && !(run.created_at < f.created_before)) return false;
  if (f.before !== undefined && !(run.id < f.before)) return false;
  return true;
}

/** Evaluation runs in the scope's state (scope-state.ts), journaled like every other write. */
export function createEvaluationRunRepository(registry: ScopeRegistry): EvaluationRunRepository {
  return {
    async putRuns(scope, runs) {
      if (runs.length === 0) return;
      const store = registry.forWrite(scope);
      const copies = runs.map((r) => structuredClone(r));
      await store.mutate(() => ({ op: { op: 'evrun', r: copies } }));
    },
    async getRun(scope, id) {
      const run = registry.forRead(scope)?.state.evalRuns.get(id);
      return run ? structuredClone(run) : null;
    },
    async listRuns(scope, filter) {
      const store = registry.forRead(scope);
      const limit = Math.floor(filter.limit);
      if (!store || !(limit > 0)) return [];
      const ids = [...store.state.evalRuns.keys()].sort().reverse();
      const out: EvaluationRun[] = [];
      for (const id of ids) {
        const run = store.state.evalRuns.get(id)!;
        if (!matches(run, filter)) continue;
        out.push(structuredClone(run));
        if (out.length >= limit) break;
      }
      return out;
    },
    async putCase(scope, runId, c) {
      const store = registry.forRead(scope);
      if (!store) return false;
      let found = false;
      const copy = structuredClone(c);
      await store.mutate(() => {
        found = store.state.evalRuns.has(runId);
        return found ? { op: { op: 'evcase', run: runId, c: copy } } : null;
      });
      return found;
    },
    async listCases(scope, runId) {
      const cases = registry.forRead(scope)?.state.evalCases.get(runId);
      return cases ? [...cases.values()].map((c) => structuredClone(c)) : [];
    },
    async deleteRuns(scope, ids) {
      const store = registry.forRead(scope);
      if (!store) return 0;
      let n = 0;
      await store.mutate(() => {
        const present = [...new Set(ids)].filter((id) => store.state.evalRuns.has(id));
        n = present.length;
        return n === 0 ? null : { op: { op: 'evdel', ids: present } };
      });
      return n;
    },
  };
}
