/**
 * Storage contract, part 3: governance. Classification (atomic, seen by the filters at once),
 * multi-classification filters, and the deletion cascade of a project and of a tenant: what
 * the target held is gone through every repository, neighbours are untouched, a dry-run count
 * changes nothing, and a running deletion job survives the deletion of its own scope.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { computeRollup } from '../../src/core/roi.js';
import type { Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { angled, at, audit, cluster, collect, ids, makePattern, pid, roi, SCOPE_A, SCOPE_B, SCOPE_C, vec } from './storage.contract.fixtures.js';
import { makeCase, makeRun, runId } from './storage.contract.evaluation-runs.js';

const OPTS = { at: at(10_000), keepRunningOperations: ['governance_delete'] };
let jobCounter = 0;
const jobId = () => `gov${String(++jobCounter).padStart(6, '0')}`;

/** Puts something in every repository of the scope; `base` keeps pattern ids apart per scope. */
export async function populateScope(storage: Storage, scope: Scope, base: number): Promise<void> {
  for (let n = base; n < base + 5; n++) {
    await storage.patterns.insert(scope, makePattern(n, { classification: n % 2 ? 'public' : 'confidential' }), angled(n * 7));
    await storage.evals.add(scope, pid(n), 6, at(n));
  }
  await storage.skills.set(scope, pid(base), ['python']);
  await storage.feedback.upsert(scope, [cluster(`f${base}`)]);
  await storage.metrics.recordRun(scope, 8);
  await storage.metrics.recordRecall(scope, true);
  await storage.analytics.append(scope, roi(base));
  await storage.rollups.put(scope, computeRollup('daily', [roi(base)], new Date(at(base + 10))));
  await storage.projects.setProjectRetention(scope, 30, at(base));
  await storage.audit.append(audit(base, { ...scope, detail: { secret_ish: 'detail of ' + scope.project_id } }));
  if (storage.jobs) await storage.jobs.enqueue(scope, { job_id: jobId(), operation: 'aging', payload: { n: base }, created_at: at(base) });
  await storage.evaluationRuns.putRuns(scope, [makeRun(base + 1)]);
  await storage.evaluationRuns.putCase(scope, runId(base + 1), makeCase(`case-${base}`));
}

/** Everything the port shows of a scope, comparable with toEqual. */
export async function scopeView(storage: Storage, scope: Scope) {
  const patterns = await collect(storage.patterns.iterate(scope));
  return {
    patterns,
    count: await storage.patterns.count(scope),
    search: ids((await storage.patterns.search(scope, vec(1), 50)).map((h) => h.pattern)),
    evals: Object.fromEntries(await storage.evals.recent(scope, patterns.map((p) => p.id), 10)),
    skills: await Promise.all(patterns.map((p) => storage.skills.get(scope, p.id))),
    feedback: await storage.feedback.list(scope),
    metrics: await storage.metrics.get(scope),
    analytics: await storage.analytics.list(scope, { limit: 100 }),
    rollup: await storage.rollups.get(scope, 'daily'),
    retention: await storage.projects.getRetention(scope),
    jobs: storage.jobs ? (await storage.jobs.list(scope, { limit: 100 })).map((j) => j.job_id) : [],
    audit: (await storage.audit.list({ tenant_id: scope.tenant_id, limit: 1000 })).filter((e) => e.project_id === scope.project_id),
    evaluationRuns: await storage.evaluationRuns.listRuns(scope, { limit: 100 }),
    evaluationCases: await Promise.all((await storage.evaluationRuns.listRuns(scope, { limit: 100 })).map((r) => storage.evaluationRuns.listCases(scope, r.id))),
  };
}

function expectEmpty(view: Awaited<ReturnType<typeof scopeView>>, tenantRetention: number | null): void {
  expect(view.patterns).toEqual([]);
  expect(view.count).toBe(0);
  expect(view.search).toEqual([]);
  expect(view.feedback).toEqual([]);
  expect(view.metrics).toEqual({ runs: 0, successes: 0, eval_sum: 0, recalls: 0, reusing_recalls: 0 });
  expect(view.analytics).toEqual([]);
  expect(view.rollup).toBeNull();
  expect(view.retention).toEqual({ project_days: null, tenant_days: tenantRetention });
  expect(view.jobs).toEqual([]);
  expect(view.evaluationRuns).toEqual([]);
  expect(view.evaluationCases).toEqual([]);
  // Audit events stay with kind and time, without detail or ip.
  expect(view.audit.length).toBeGreaterThan(0);
  for (const e of view.audit) {
    expect(e.detail).toEqual({});
    expect(e.ip).toBeNull();
    expect(e.kind).toBe('auth_failed');
  }
}

export function governanceContract(current: () => Storage): void {
  let storage: Storage;
  beforeEach(() => {
    storage = current();
  });

  describe('governance: classification', () => {
    it('classify changes only the classification, atomically, and filters see it at once', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1, { reuse_count: 3 }), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(2, { classification: 'public' }), angled(10));
      const updated = await storage.patterns.classify(SCOPE_A, pid(1), 'confidential');
      expect(updated).toEqual(makePattern(1, { reuse_count: 3, classification: 'confidential' }));
      expect(await storage.patterns.get(SCOPE_A, pid(1))).toEqual(updated);
      expect(ids((await storage.patterns.search(SCOPE_A, vec(1), 5, { classification: 'confidential' })).map((h) => h.pattern))).toEqual([pid(1)]);
      expect(ids((await storage.patterns.search(SCOPE_A, vec(1), 5, { classification: 'internal' })).map((h) => h.pattern))).toEqual([]);
      expect(await storage.patterns.classify(SCOPE_A, pid(9), 'public')).toBeNull();
      expect(await storage.patterns.classify(SCOPE_C, pid(1), 'public')).toBeNull();
      expect((await storage.patterns.get(SCOPE_A, pid(1)))!.classification).toBe('confidential');
    });

    it('filters by a list of classifications in iterate and search', async () => {
      await storage.patterns.insert(SCOPE_A, makePattern(1, { classification: 'public' }), vec(1));
      await storage.patterns.insert(SCOPE_A, makePattern(2, { classification: 'internal' }), angled(5));
      await storage.patterns.insert(SCOPE_A, makePattern(3, { classification: 'confidential' }), angled(10));
      const filter = { classifications: ['public' as const, 'confidential' as const] };
      expect(ids(await collect(storage.patterns.iterate(SCOPE_A, filter)))).toEqual([pid(1), pid(3)]);
      expect(ids((await storage.patterns.search(SCOPE_A, vec(1), 5, filter)).map((h) => h.pattern))).toEqual([pid(1), pid(3)]);
    });
  });

  describe('governance: deletion cascade', () => {
    beforeEach(async () => {
      await populateScope(storage, SCOPE_A, 0);
      await populateScope(storage, SCOPE_B, 100);
      await populateScope(storage, SCOPE_C, 200);
      await storage.projects.setTenantRetention('tenant-a', 90, at(1));
      await storage.projects.setTenantRetention('tenant-c', 45, at(1));
    });

    it('a dry-run count changes nothing', async () => {
      const before = await Promise.all([SCOPE_A, SCOPE_B, SCOPE_C].map((s) => scopeView(storage, s)));
      const counts = await storage.governance.countScope({ tenant_id: 'tenant-a', project_id: null }, OPTS);
      expect(counts).toMatchObject({ patterns_deleted: 10, jobs_deleted: storage.jobs ? 2 : 0, projects_deleted: 2 });
      expect(await Promise.all([SCOPE_A, SCOPE_B, SCOPE_C].map((s) => scopeView(storage, s)))).toEqual(before);
    });

    it('deleting a project removes all of it and leaves its sibling and the other tenant untouched', async () => {
      const b = await scopeView(storage, SCOPE_B);
      const c = await scopeView(storage, SCOPE_C);
      const counts = await storage.governance.deleteScope({ ...SCOPE_A }, OPTS);
      expect(counts).toMatchObject({ patterns_deleted: 5, jobs_deleted: storage.jobs ? 1 : 0, projects_deleted: 1 });
      expectEmpty(await scopeView(storage, SCOPE_A), 90);
      expect(await scopeView(storage, SCOPE_B)).toEqual(b);
      expect(await scopeView(storage, SCOPE_C)).toEqual(c);
      // The scope is usable again afterwards, starting empty.
      await storage.patterns.insert(SCOPE_A, makePattern(1), vec(1));
      expect(await storage.patterns.count(SCOPE_A)).toBe(1);
      // Deleting again finds nothing more.
      expect(await storage.governance.deleteScope({ ...SCOPE_A }, OPTS)).toMatchObject({ patterns_deleted: 1, jobs_deleted: 0 });
    });

    it('deleting a tenant removes every project of it and its settings, not the other tenant', async () => {
      const c = await scopeView(storage, SCOPE_C);
      const counts = await storage.governance.deleteScope({ tenant_id: 'tenant-a', project_id: null }, OPTS);
      expect(counts).toMatchObject({ patterns_deleted: 10, jobs_deleted: storage.jobs ? 2 : 0, projects_deleted: 2 });
      expectEmpty(await scopeView(storage, SCOPE_A), null);
      expectEmpty(await scopeView(storage, SCOPE_B), null);
      expect(await scopeView(storage, SCOPE_C)).toEqual(c);
      expect((await storage.patterns.listScopes()).map((s) => s.tenant_id)).toEqual(['tenant-c']);
    });

    it('keeps a running deletion job of the target (its caller polls it)', async () => {
      const jobs = storage.jobs;
      if (!jobs) return;
      const id = jobId();
      await jobs.enqueue(SCOPE_A, { job_id: id, operation: 'governance_delete', payload: {}, created_at: at(1) });
      // Claim everything pending (the aging jobs too), so ours is running.
      await jobs.claim('worker-1', 100, at(2));
      expect((await jobs.get(SCOPE_A, id))!.status).toBe('running');
      const counts = await storage.governance.deleteScope({ ...SCOPE_A }, OPTS);
      expect(counts.jobs_deleted).toBe(1);
      expect((await jobs.list(SCOPE_A, { limit: 10 })).map((j) => j.job_id)).toEqual([id]);
      expect(await jobs.complete(id, 'worker-1', { ok: true }, at(3))).toBe(true);
    });
  });
}
