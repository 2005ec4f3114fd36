import { setImmediate as nextTurn } from 'node:timers/promises';
import { ConflictError } from '../../../core/errors.js';
import { sortInSlices, WorkBudget } from '../../../core/slices.js';
import { dot, type HybridCandidate, type HybridCandidateSet, type HybridQuery } from '../../../core/hybrid.js';
import { hasFilter, type PatternFilter, type PatternRecord, type Scope, type ScoredPattern } from '../../../core/types.js';
import type { PatternRepository } from '../../../ports/storage.js';
import { assertPatternId, isPatternId } from './ids.js';
import type { ScopeRegistry } from './scope-registry.js';
import type { ScopeStore } from './scope-store.js';
import { assertTenantRoom } from './tenant-quota.js';
import { assertVector, encodeVector, normalized } from './engine/index.js';
import type { JournalOp } from './journal-ops.js';

function matches(p: PatternRecord, f: PatternFilter | undefined): boolean {
  if (!f) return true;
  if (f.classification !== undefined && p.classification !== f.classification) return false;
  if (f.classifications !== undefined && !f.classifications.includes(p.classification)) return false;
  if (f.source !== undefined && p.source !== f.source) return false;
  if (f.min_score !== undefined && !(p.success_score >= f.min_score)) return false;
  if (f.max_score !== undefined && !(p.success_score <= f.max_score)) return false;
  if (f.updated_after !== undefined && !(Date.parse(p.updated_at) > Date.parse(f.updated_after))) return false;
  if (f.updated_before !== undefined && !(Date.parse(p.updated_at) < Date.parse(f.updated_before))) return false;
  return true;
}

/** Newest updated_at first, then higher id first: the order of `list` (instants compared, not strings). */
function newestFirst(a: { updated_at: string; id: string }, b: { updated_at: string; id: string }): number {
  return Date.parse(b.updated_at) - Date.parse(a.updated_at) || compare(b.id, a.id);
}

/** A vector of another length than the scope's index is another embedding model: refused until reindex. */
export function assertDimension(store: ScopeStore, unit: Float32Array): void {
  const dim = store.state.index.dimension;
  if (dim !== 0 && dim !== unit.length) {
    throw new Error(
      `vector has ${unit.length} dimensions but this scope's vectors have ${dim}; ` +
        'the embedding model changed: run `service reindex`',
    );
  }
}

/** Every record's id and vector checked before anything is written, and the vectors as unit length. */
function checkedUnits(items: readonly { record: { id: string }; vector: unknown }[]): Float32Array[] {
  return items.map(({ record, vector }) => {
    assertPatternId(record?.id);
    assertVector(vector);
    return normalized(vector);
  });
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const clamp01 = (x: number) => (x > 1 ? 1 : x > 0 ? x : 0);

/** A set insert or lookup per candidate: a fraction of a unit of work (core/slices.ts). */
const SET_COST = 0.25;

/** Work done between two turns of the event loop (core/slices.ts): a search may cover a whole scope. */
const searchBudget = () => new WorkBudget(() => nextTurn());

/** The scope's k nearest rows to `vector` that pass the filter (applied inside the scan), ordered in slices. */
async function nearest(registry: ScopeRegistry, scope: Scope, vector: Float32Array, k: number, filter: PatternFilter | undefined, budget: WorkBudget) {
  assertVector(vector);
  return nearestToUnit(registry, scope, normalized(vector), k, filter, budget);
}

/** `nearest` for a vector already made unit length here (normalized). */
async function nearestToUnit(registry: ScopeRegistry, scope: Scope, unit: Float32Array, k: number, filter: PatternFilter | undefined, budget: WorkBudget) {
  const store = registry.forRead(scope);
  const limit = Math.floor(k);
  if (!store || !(limit > 0)) return [];
  const accept = hasFilter(filter) ? (p: PatternRecord) => matches(p, filter) : undefined;
  return store.state.index.searchInSlices(unit, limit, accept, budget);
}

/**
 * Hybrid candidates of one scope: the vector index's nearest rows and the keyword index's
 * best BM25 rows (both filtered inside the scan), each with its exact cosine and mean dot,
 * built in slices of bounded work (thousands of candidates at a deep offset).
 */
async function hybrid(registry: ScopeRegistry, scope: Scope, query: HybridQuery): Promise<HybridCandidateSet> {
  const store = registry.forRead(scope);
  const state = store?.state;
  if (query.vector) assertVector(query.vector);
  const unit = query.vector ? normalized(query.vector) : null;
  const dim = unit?.length ?? state?.index.dimension ?? 0;
  const keywordStats = state?.keywords.stats(query.terms) ?? { docs: 0, totalTerms: 0, totalCodeTerms: 0, df: new Map<string, number>() };
  const mean = state && dim > 0 ? state.vectorMean.mean(dim) : null;
  // The principal directions ranking removes (core/components.ts): each candidate's and the mean's dot with them.
  const directions = unit && query.directions ? query.directions.filter((u) => u.length === dim) : [];
  const stats = {
    ...keywordStats,
    vectors: mean ? state!.vectorMean.count : 0,
    query_mean_dot: mean && unit ? dot(unit, mean) : null,
    mean_norm2: mean ? state!.vectorMean.norm2() : null,
    mean_direction_dots: mean && directions.length > 0 ? directions.map((u) => dot(mean, u)) : null,
  };
  if (!state) return { candidates: [], stats };
  const budget = searchBudget();
  // The vector scan's rows (with their cosine), then the keyword rows it did not find.
  const scanned = unit && query.vectorK > 0 ? await nearestToUnit(registry, scope, unit, query.vectorK, query.filter, budget) : [];
  const seen = new Set<string>();
  await budget.forRanges(scanned.length, (from, to) => {
    for (let i = from; i < to; i++) seen.add(scanned[i].id);
  }, SET_COST);
  const accept = hasFilter(query.filter) ? (id: string) => matches(state.patterns.get(id)!, query.filter) : undefined;
  // Unordered: the candidates' order plays no part in their blend or ranking.
  const keywordHits = await state.keywords.topInSlices(query.terms, Math.floor(query.keywordK), accept, budget, query.codeWeight ?? 0);
  const keywordOnly: string[] = [];
  await budget.forRanges(keywordHits.length, (from, to) => {
    for (let i = from; i < to; i++) if (!seen.has(keywordHits[i].id)) keywordOnly.push(keywordHits[i].id);
  }, SET_COST);
  const window = Math.floor(query.evalWindow);
  const candidates: HybridCandidate[] = [];
  const total = scanned.length + keywordOnly.length;
  // The keyword-only candidates' cosines in one go (the scan gave the nearest ones theirs).
  const keywordCosines = unit ? state.index.cosinesOf(unit, keywordOnly) : null;
  const idAt = (i: number) => (i < scanned.length ? scanned[i].id : keywordOnly[i - scanned.length]);
  // Read at each slice: a pattern deleted while the loop was handed back drops out.
  await budget.forRanges(total, (from, to) => {
    // The slice's dots with each direction, its rows looked up once (0 for a row with no vector).
    let directionDots: number[][] | null = null;
    if (directions.length > 0 && mean) {
      const ids = new Array<string>(to - from);
      for (let i = from; i < to; i++) ids[i - from] = idAt(i);
      directionDots = state.index.dotsWith(directions, ids);
    }
    for (let i = from; i < to; i++) {
      const id = idAt(i);
      const record = state.patterns.get(id);
      if (!record) continue;
      const cosine = i < scanned.length ? scanned[i].score : (keywordCosines?.[i - scanned.length] ?? 0);
      const meanDotKept = mean ? state.vectorMean.keptDot(id) : undefined;
      // The vector is looked up (a view allocated) only for a mean dot not worked out yet.
      const vector = mean && meanDotKept === undefined ? state.index.vectorOf(id) : null;
      candidates.push({
        id,
        task: record.task,
        similarity: clamp01(cosine),
        cosine,
        mean_dot: meanDotKept ?? (mean && vector && vector.length === mean.length ? state.vectorMean.meanDot(id, vector) : null),
        code_terms: state.keywords.codeTermsOf(id),
        direction_dots: directionDots ? directionDots[i - from] : null,
        recent_evals: (window > 0 ? state.recentEvals(id, window) : undefined) ?? [],
        updated_at: record.updated_at,
      });
    }
  }, 2 + directions.length);
  return { candidates, stats };
}

export function createPatternRepository(registry: ScopeRegistry): PatternRepository {
  return {
    async insert(scope: Scope, pattern: PatternRecord, vector: Float32Array): Promise<void> {
      assertPatternId(pattern?.id);
      assertVector(vector);
      const unit = normalized(vector);
      const store = registry.forWrite(scope);
      await store.mutate(() => {
        if (store.state.patterns.has(pattern.id)) throw new ConflictError(`pattern ${pattern.id} already exists`);
        assertDimension(store, unit);
        return { op: { op: 'put', p: { ...pattern }, v: encodeVector(unit) }, vector: unit };
      });
    },

    async writeBatch(scope, writes, tenantQuota) {
      const outcome = { written: 0, present: 0 };
      if (writes.length === 0) return outcome;
      const units = checkedUnits(writes);
      const store = registry.forWrite(scope);
      // One journal line for the whole batch: durable together or not at all.
      await store.mutate(() => {
        const ops: JournalOp[] = [];
        const written = new Set<string>();
        let inserted = 0;
        outcome.written = outcome.present = 0;
        for (const [i, { record, replace }] of writes.entries()) {
          assertDimension(store, units[i]);
          if (units[i].length !== units[0].length) throw new Error('one import batch holds vectors of different dimensions');
          const exists = store.state.patterns.has(record.id) || written.has(record.id);
          // An insert stored since the import was planned (another run of its job): not this write's.
          if (exists && !replace && !written.has(record.id)) {
            outcome.present += 1;
            continue;
          }
          outcome.written += 1;
          ops.push({ op: 'put', p: { ...record }, v: encodeVector(units[i]) });
          if (!exists) {
            ops.push({ op: 'eval', id: record.id, s: record.eval_score, at: record.updated_at });
            inserted++;
          }
          written.add(record.id);
        }
        // In the same synchronous step as the apply: no other project's write comes between.
        assertTenantRoom(registry, scope.tenant_id, tenantQuota, inserted);
        return { op: { op: 'batch', ops } };
      });
      return outcome;
    },

    async copyIn(scope, patterns) {
      if (patterns.length === 0) return;
      const units = checkedUnits(patterns);
      const store = registry.forWrite(scope);
      // One journal line: each pattern with its evals and skills, durable together.
      await store.mutate(() => {
        const ops: JournalOp[] = [];
        for (const [i, { record, evals, skills }] of patterns.entries()) {
          if (store.state.patterns.has(record.id)) throw new ConflictError(`pattern ${record.id} already exists`);
          assertDimension(store, units[i]);
          if (units[i].length !== units[0].length) throw new Error('one copied batch holds vectors of different dimensions');
          ops.push({ op: 'put', p: { ...record }, v: encodeVector(units[i]) });
          for (const e of evals) ops.push({ op: 'eval', id: record.id, s: e.score, at: e.at });
          if (skills.length > 0) ops.push({ op: 'skills', id: record.id, k: [...new Set(skills)] });
        }
        return { op: { op: 'batch', ops } };
      });
    },

    async get(scope, id) {
      const store = registry.forRead(scope);
      const rec = isPatternId(id) ? store?.state.patterns.get(id) : undefined;
      return rec ? { ...rec } : null;
    },

    async getMany(scope, ids) {
      const patterns = registry.forRead(scope)?.state.patterns;
      const out: PatternRecord[] = [];
      if (!patterns) return out;
      for (const id of new Set(ids)) {
        const rec = patterns.get(id);
        if (rec) out.push({ ...rec });
      }
      return out;
    },

    async update(scope, pattern, vector) {
      assertPatternId(pattern?.id);
      let unit: Float32Array | undefined;
      if (vector !== undefined) {
        assertVector(vector);
        unit = normalized(vector);
      }
      const store = registry.forRead(scope);
      if (!store) return false;
      let found = false;
      await store.mutate(() => {
        if (!store.state.patterns.has(pattern.id)) return null;
        if (unit) assertDimension(store, unit);
        found = true;
        const p = { ...pattern };
        return unit ? { op: { op: 'put', p, v: encodeVector(unit) }, vector: unit } : { op: { op: 'put', p } };
      });
      return found;
    },

    async delete(scope, id) {
      const store = registry.forRead(scope);
      if (!store || !isPatternId(id)) return false;
      let found = false;
      await store.mutate(() => {
        if (!store.state.patterns.has(id)) return null;
        found = true;
        return { op: { op: 'del', id } };
      });
      return found;
    },

    async count(scope) {
      return registry.forRead(scope)?.state.patterns.size ?? 0;
    },

    async search(scope, vector, k, filter, evalWindow = 0): Promise<ScoredPattern[]> {
      const budget = searchBudget();
      const hits = await nearest(registry, scope, vector, k, filter, budget);
      const state = registry.forRead(scope)?.state;
      const window = Math.floor(evalWindow);
      return budget.map(hits, (h) => ({
        pattern: { ...h.item },
        similarity: clamp01(h.score),
        recent_evals: (window > 0 ? state?.recentEvals(h.id, window) : undefined) ?? [],
      }));
    },

    async hybridCandidates(scope, query) {
      return hybrid(registry, scope, query);
    },

    async sampleVectors(scope, n) {
      const state = registry.forRead(scope)?.state;
      const want = Math.floor(n);
      if (!state || !(want > 0)) return [];
      // Ids in order, in slices (a project's first recall fits its tier policy on this sample).
      // Ids are time-ordered and the map keeps insertion order, so they are usually in order
      // already: checked first, and sorted only when not (an import of older ids, a re-learn).
      const budget = searchBudget();
      const ids = [...state.patterns.keys()];
      const total = ids.length;
      let inOrder = true;
      await budget.forRanges(total - 1, (from, to) => {
        for (let i = from; i < to && inOrder; i++) inOrder = ids[i] < ids[i + 1];
      }, SET_COST);
      const order = inOrder ? null : await sortInSlices(ids, compare, budget);
      const chosen: string[] = [];
      for (let r = 0; r < total; r++) {
        const id = order ? order.next()! : ids[r];
        // The ranks where floor(r · n / total) steps up: the same rule as the PostgreSQL query.
        if (r === 0 || Math.floor((r * want) / total) !== Math.floor(((r - 1) * want) / total)) chosen.push(id);
        if (budget.charge(order ? 1 : 1 / 16)) await budget.handBack();
      }
      // Read now: one deleted meanwhile, or with a zero vector, is skipped (on PostgreSQL too).
      const out: { id: string; vector: Float32Array }[] = [];
      for (const id of chosen) {
        const vector = state.index.vectorOf(id);
        if (vector?.some((x) => x !== 0)) out.push({ id, vector: Float32Array.from(vector) });
      }
      return out;
    },

    async vectors(scope, ids) {
      // The unit-length copies the index keeps: cosine, all search uses, is the same.
      const out = new Map<string, Float32Array>();
      const index = registry.forRead(scope)?.state.index;
      if (!index) return out;
      for (const id of new Set(ids)) {
        const view = isPatternId(id) ? index.vectorOf(id) : null;
        if (view) out.set(id, Float32Array.from(view));
      }
      return out;
    },

    async list(scope, { limit, after, filter }) {
      const patterns = registry.forRead(scope)?.state.patterns;
      if (!patterns) return [];
      const page: PatternRecord[] = [];
      for (const rec of patterns.values()) {
        if (matches(rec, filter) && (after === null || newestFirst(after, rec) < 0)) page.push(rec);
      }
      return page.sort(newestFirst).slice(0, limit).map((rec) => ({ ...rec }));
    },

    async *iterate(scope, filter) {
      const patterns = registry.forRead(scope)?.state.patterns;
      if (!patterns) return;
      // Ids are time-ordered, so id order is creation order. The id list is fixed up front;
      // records are read at yield time, so deletions meanwhile are skipped, updates seen.
      const ids = [...patterns.keys()].sort();
      for (const id of ids) {
        const rec = patterns.get(id);
        if (rec && matches(rec, filter)) yield { ...rec };
      }
    },

    async recordReuse(scope, ids, delta, at) {
      const store = registry.forRead(scope);
      if (!store) return;
      const wanted = [...new Set(ids)].filter(isPatternId);
      await store.mutate(() => {
        const present = wanted.filter((id) => store.state.patterns.has(id));
        return present.length === 0 ? null : { op: { op: 'reuse', ids: present, d: delta, at } };
      });
    },

    async classify(scope, id, classification) {
      const store = registry.forRead(scope);
      if (!store || !isPatternId(id)) return null;
      let updated: PatternRecord | null = null;
      // Decided against the state at append time: a reuse bump in flight is never overwritten.
      await store.mutate(() => {
        const current = store.state.patterns.get(id);
        if (!current) return null;
        updated = { ...current, classification };
        return { op: { op: 'put', p: updated } };
      });
      return updated === null ? null : { ...(updated as PatternRecord) };
    },

    async setVector(scope, id, vector) {
      assertPatternId(id);
      assertVector(vector);
      const store = registry.forRead(scope);
      if (!store) return;
      const unit = normalized(vector);
      // A new dimension here is a reindex to another model: the index switches to it and
      // patterns not re-embedded yet drop out of search until their turn.
      await store.mutate(() =>
        store.state.patterns.has(id) ? { op: { op: 'vec', id, v: encodeVector(unit) }, vector: unit } : null,
      );
    },

    async listScopes() {
      return registry
        .entries()
        .filter((e) => e.store.state.patterns.size > 0)
        .map((e) => ({ ...e.scope }))
        .sort((a, b) => compare(a.tenant_id, b.tenant_id) || compare(a.project_id, b.project_id));
    },
  };
}
