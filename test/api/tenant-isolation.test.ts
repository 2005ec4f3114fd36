/**
 * Tenant isolation in DB auth mode: tenant B's keys, on every read and write endpoint, neither
 * see nor change anything of tenant A (same project id `default` in both). The list of checks
 * is keyed by route and compared with the server's route registry, so a new endpoint fails
 * this file until its isolation is checked here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRoutes } from '../../server/route-registry.js';
import type { Scope } from '../../src/core/types.js';
import { requirePostgres } from '../support/pg.js';
import { bearer, perFileDatabase, provisionKey, startDbServer, type DbServer } from './db-auth-helpers.js';
import { learnBody } from './helpers.js';

const hasPg = await requirePostgres('tenant isolation');
const database = perFileDatabase('isolation');

const A: Scope = { tenant_id: 'acme', project_id: 'default' };
const B: Scope = { tenant_id: 'globex', project_id: 'default' };
const TASK_A = 'Reconcile the quarterly ledger against bank statements';
const TASK_A2 = 'Email customers whose subscription expires next week';
const ISSUE_A = 'acme evaluator says the ledger totals are never validated';

interface Snapshot {
  export: unknown;
  metrics: unknown;
  keys: unknown;
  feedback: unknown;
  retention: unknown;
  rollup: unknown;
  events: unknown;
}

describe.skipIf(!hasPg)('tenant isolation (DB auth mode)', () => {
  let t: DbServer;
  let a: Record<string, string>;
  let b: Record<string, string>;
  let aPatternKeys: string[];
  let aExtraKeyId: string;
  let aExtraSecret: string;
  let aJobId: string;
  let aRecallId: string;
  let before: Snapshot;

  const snapshot = async (headers: Record<string, string>): Promise<Snapshot> => ({
    export: (await t.call('GET', '/v1/export', undefined, headers)).json(),
    metrics: (await t.call('GET', '/v1/metrics', undefined, headers)).json(),
    keys: (await t.call('GET', '/v1/keys', undefined, headers)).json(),
    feedback: await t.app.deps.storage.feedback.list(A),
    retention: (await t.call('GET', '/v1/governance/retention', undefined, headers)).json(),
    rollup: (await t.call('GET', '/v1/analytics/rollup/weekly', undefined, headers)).json(),
    events: (await t.call('GET', '/v1/analytics/events?limit=1000', undefined, headers)).json(),
  });

  beforeAll(async () => {
    // No job worker: A's queued job stays pending, so a cross-tenant cancel would show.
    t = await startDbServer((await database.schema()).url, {}, {}, { runJobs: false });
    a = bearer((await provisionKey(t.keyStore, { ...A, role: 'owner' })).secret);
    b = bearer((await provisionKey(t.keyStore, { ...B, role: 'owner' })).secret);

    aPatternKeys = [];
    for (const task of [TASK_A, TASK_A2]) aPatternKeys.push((await t.call('POST', '/v1/learn', learnBody(task), a)).json().pattern_key);
    expect((await t.call('POST', '/v1/skills/register', { pattern_key: aPatternKeys[0], skills: ['ledger'] }, a)).statusCode).toBe(200);
    aRecallId = (await t.call('POST', '/v1/recall', { task: TASK_A }, a)).json().recall_id;
    expect((await t.call('POST', '/v1/outcomes', { recall_id: aRecallId, pattern_key: aPatternKeys[0], passed: false, detail: 'acme lesson' }, a)).statusCode).toBe(200);
    const at = new Date().toISOString();
    await t.app.deps.storage.feedback.upsert(A, [{ id: 'fa1', text: ISSUE_A, count: 3, score: 0.8, last_seen: at, last_decayed_at: null, tasks: [TASK_A] }]);
    const extra = (await t.call('POST', '/v1/keys', { name: 'acme extra' }, a)).json();
    aExtraKeyId = extra.key_id;
    aExtraSecret = extra.secret;
    const job = await t.call('POST', '/v1/aging', undefined, { ...a, prefer: 'respond-async' });
    expect(job.statusCode).toBe(202);
    aJobId = job.json().job_id;
    expect((await t.call('PUT', '/v1/governance/retention', { retention_days: 30 }, a)).statusCode).toBe(200);
    expect((await t.call('POST', '/v1/analytics/rollup', { window: 'weekly' }, a)).statusCode).toBe(200);
    before = await snapshot(a);
  });

  afterAll(async () => {
    await t?.close();
    await database.drop();
  });

  const json = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => {
    const res = await t.call(method, url, body, b);
    return { status: res.statusCode, body: res.json() };
  };
  const noAKeysIn = (value: unknown) => {
    for (const key of aPatternKeys) expect(JSON.stringify(value)).not.toContain(key);
  };

  /** Tenant B on each route: what it must not see or change of tenant A. */
  const checks: Record<string, () => Promise<void>> = {
    'POST /v1/learn': async () => {
      const res = await json('POST', '/v1/learn', learnBody(TASK_A));
      expect(res.body).toMatchObject({ stored: true, pattern_count: 1 });
      noAKeysIn(res.body);
    },
    'POST /v1/recall': async () => {
      const res = await json('POST', '/v1/recall', { task: TASK_A2 });
      expect(res.status).toBe(200);
      noAKeysIn(res.body);
    },
    'POST /v1/recall/batch': async () => {
      const res = await json('POST', '/v1/recall/batch', { requests: [{ task: TASK_A2 }, { task: TASK_A, limit: 50, readonly: true }] });
      expect(res.status).toBe(200);
      expect(res.body.results).toHaveLength(2);
      noAKeysIn(res.body);
    },
    'GET /v1/recall': async () => {
      const res = await json('GET', `/v1/recall?task=${encodeURIComponent(TASK_A)}&limit=50`);
      expect(res.status).toBe(200);
      noAKeysIn(res.body);
    },
    'GET /v1/metrics': async () => {
      expect((await json('GET', '/v1/metrics')).body).toMatchObject({ pattern_count: 1, runs: 1 });
    },
    'POST /v1/aging': async () => {
      expect((await json('POST', '/v1/aging')).body).toMatchObject({ remaining: 1 });
    },
    'GET /v1/patterns': async () => {
      const res = await json('GET', '/v1/patterns?limit=100');
      expect(res.status).toBe(200);
      expect(res.body.patterns.length).toBeGreaterThan(0);
      noAKeysIn(res.body);
    },
    'GET /v1/patterns/export': async () => {
      const res = await t.call('GET', '/v1/patterns/export', undefined, b);
      expect(res.statusCode).toBe(200);
      const records = res.body.trim().split('\n').map((l) => JSON.parse(l) as { tenant_id: string });
      expect(records.length).toBeGreaterThan(0);
      expect(new Set(records.map((r) => r.tenant_id))).toEqual(new Set(['globex']));
      noAKeysIn(res.body);
    },
    'GET /v1/access': async () => {
      // The caller's own role and permissions, nothing of another tenant.
      const res = await json('GET', '/v1/access');
      expect(res.body.role).toBe('owner');
      expect(JSON.stringify(res.body)).not.toMatch(/acme/i);
    },
    'GET /v1/patterns/:key': async () => {
      for (const key of aPatternKeys) expect((await json('GET', `/v1/patterns/${encodeURIComponent(key)}`)).status).toBe(404);
    },
    'GET /v1/patterns/:key/history': async () => {
      for (const key of aPatternKeys) expect((await json('GET', `/v1/patterns/${encodeURIComponent(key)}/history`)).status).toBe(404);
    },
    'GET /v1/patterns/:key/outcomes': async () => {
      for (const key of aPatternKeys) expect((await json('GET', `/v1/patterns/${encodeURIComponent(key)}/outcomes`)).status).toBe(404);
    },
    'POST /v1/outcomes': async () => {
      // A's recall id is unknown in B's scope, whatever the key.
      const res = await json('POST', '/v1/outcomes', { recall_id: aRecallId, pattern_key: aPatternKeys[0], passed: true });
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain('acme lesson');
      expect((await t.call('GET', `/v1/patterns/${encodeURIComponent(aPatternKeys[0])}/outcomes`, undefined, a)).json().outcomes)
        .toMatchObject([{ recall_id: aRecallId, passed: false, detail: 'acme lesson' }]);
    },
    'DELETE /v1/patterns/:key': async () => {
      for (const key of aPatternKeys) expect((await json('DELETE', `/v1/patterns/${encodeURIComponent(key)}`)).status).toBe(404);
    },
    'POST /v1/skills/register': async () => {
      expect((await json('POST', '/v1/skills/register', { pattern_key: aPatternKeys[1], skills: ['stolen'] })).status).toBe(404);
    },
    'POST /v1/skills/search': async () => {
      expect((await json('POST', '/v1/skills/search', { skills: ['ledger'] })).body).toMatchObject({ count: 0 });
    },
    'GET /v1/export': async () => {
      const res = await json('GET', '/v1/export');
      expect(res.body.count).toBe(1);
      noAKeysIn(res.body);
    },
    'POST /v1/import': async () => {
      // A's key with overwrite lands in B's scope; A's record stays as it was.
      const res = await json('POST', '/v1/import', { records: [{ key: aPatternKeys[0], task: 'overwritten?', code: 'x', eval_score: 1 }], overwrite: true });
      expect(res.body).toMatchObject({ imported: 1, total: 1 });
    },
    'GET /v1/health': async () => {
      expect((await json('GET', '/v1/health')).body.pattern_count).toBe(2);
    },
    'GET /v1/health/deep': async () => {
      // Process-wide probes only: no tenant data in the answer.
      const res = await json('GET', '/v1/health/deep');
      expect(JSON.stringify(res.body)).not.toMatch(/acme|ledger/i);
    },
    // The LLM endpoints answer 501 without a provider; what they read of the feedback store
    // is the analyze-failures / feedback scope checked below.
    'POST /v1/evaluate': async () => expect((await json('POST', '/v1/evaluate', { task: TASK_A, code: 'x' })).status).toBe(501),
    'POST /v1/compose': async () => expect((await json('POST', '/v1/compose', { task: TASK_A })).status).toBe(501),
    'POST /v1/evolve': async () => expect((await json('POST', '/v1/evolve', { role: 'coder', current_prompt: 'p' })).status).toBe(501),
    'POST /v1/analyze-failures': async () => {
      const res = await json('POST', '/v1/analyze-failures', {});
      expect(res.body.clusters).toEqual([]);
    },
    'GET /v1/feedback': async () => {
      expect((await json('GET', '/v1/feedback')).body.feedback).toEqual([]);
    },
    'POST /v1/feedback/decay': async () => {
      expect((await json('POST', '/v1/feedback/decay')).status).toBe(200);
    },
    'POST /v1/analytics/rollup': async () => {
      const res = await json('POST', '/v1/analytics/rollup', { window: 'daily' });
      expect(res.body.learn.count).toBe(1);
    },
    'GET /v1/analytics/rollup/:window': async () => {
      // A computed a weekly rollup, B never did.
      expect((await json('GET', '/v1/analytics/rollup/weekly')).status).toBe(404);
    },
    'GET /v1/analytics/events': async () => {
      const res = await json('GET', '/v1/analytics/events?limit=1000');
      expect(res.body.events.filter((e: { kind: string }) => e.kind === 'learn')).toHaveLength(1);
    },
    'GET /v1/governance/retention': async () => {
      expect((await json('GET', '/v1/governance/retention')).body).toEqual({ retention_days: 365, source: 'default' });
    },
    'PUT /v1/governance/retention': async () => {
      expect((await json('PUT', '/v1/governance/retention', { retention_days: 1 })).status).toBe(200);
    },
    'POST /v1/governance/retention/apply': async () => {
      expect((await json('POST', '/v1/governance/retention/apply', { dry_run: false })).status).toBe(200);
    },
    'GET /v1/governance/export': async () => {
      const res = await t.call('GET', '/v1/governance/export', undefined, b);
      expect(res.statusCode).toBe(200);
      // B's own records only (B imported a copy under one of A's keys above, into B's scope).
      const records = res.body.trim().split('\n').map((l) => JSON.parse(l));
      expect(records.map((r: { tenant_id: string }) => r.tenant_id)).toEqual(['globex', 'globex']);
      expect(records.map((r: { task: string }) => r.task)).not.toContain(TASK_A2);
    },
    'PUT /v1/governance/patterns/:key/classify': async () => {
      // aPatternKeys[0] has a copy in B's scope (the import above); [1] exists only in A's.
      const key = aPatternKeys[1];
      expect((await json('PUT', `/v1/governance/patterns/${encodeURIComponent(key)}/classify`, { classification: 'public' })).status).toBe(404);
    },
    'DELETE /v1/governance/tenants/:tenant_id': async () => {
      expect((await json('DELETE', '/v1/governance/tenants/acme')).status).toBe(403);
    },
    // B's own tenant: the deletion targets globex/<project>, never acme's project of that name.
    'DELETE /v1/governance/projects/:project_id': async () => {
      const res = await json('DELETE', '/v1/governance/projects/unused');
      expect(res.body).toMatchObject({ tenant_id: 'globex', project_id: 'unused', patterns_deleted: 0 });
    },
    'POST /v1/governance/delete-scope': async () => {
      const res = await json('POST', '/v1/governance/delete-scope?dry_run=true');
      expect(res.body).toMatchObject({ tenant_id: 'globex', project_id: 'default', dry_run: true });
      expect(res.body.patterns_deleted).toBe(2);
    },
    'GET /v1/jobs': async () => {
      const res = await json('GET', '/v1/jobs');
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain(aJobId);
    },
    'GET /v1/jobs/:id': async () => {
      expect((await json('GET', `/v1/jobs/${aJobId}`)).status).toBe(404);
    },
    'POST /v1/jobs/:id/cancel': async () => {
      expect((await json('POST', `/v1/jobs/${aJobId}/cancel`)).status).toBe(404);
    },
    'POST /v1/keys': async () => {
      const res = await json('POST', '/v1/keys', { name: 'globex key' });
      expect(res.status).toBe(201);
      expect(res.body.project_id).toBe('default');
    },
    'GET /v1/keys': async () => {
      const res = await json('GET', '/v1/keys');
      expect(res.body.keys.map((k: { name: string }) => k.name).sort()).toEqual(['globex key', 'owner of globex/default']);
      expect(JSON.stringify(res.body)).not.toContain(aExtraKeyId);
    },
    'DELETE /v1/keys/:id': async () => {
      expect((await json('DELETE', `/v1/keys/${aExtraKeyId}`)).status).toBe(404);
    },
    'POST /v1/keys/:id/rotate': async () => {
      expect((await json('POST', `/v1/keys/${aExtraKeyId}/rotate`)).status).toBe(404);
    },
    'GET /v1/billing/status': async () => {
      // B's usage only: its own patterns, not A's.
      const res = await json('GET', '/v1/billing/status');
      expect(res.body.patterns_used).toBe(await t.app.deps.storage.patterns.count(B));
    },
    // Billing is off here: the managing routes change nothing for anyone.
    'POST /v1/billing/checkout': async () => {
      expect((await json('POST', '/v1/billing/checkout', { price_id: 'p', success_url: 'https://b.test/', cancel_url: 'https://b.test/' })).status).toBe(501);
    },
    'GET /v1/billing/portal': async () => {
      expect((await json('GET', '/v1/billing/portal?return_url=https://b.test/')).status).toBe(501);
    },
    'PATCH /v1/billing/overage': async () => {
      expect((await t.call('PATCH', '/v1/billing/overage', { enabled: true }, b)).statusCode).toBe(501);
    },
  };

  it('has an isolation check for every authenticated route', () => {
    const routes = registeredRoutes(t.server).filter((r) => !r.config.public).map((r) => `${r.method} ${r.url}`);
    expect(routes.filter((r) => !(r in checks)), 'routes without an isolation check').toEqual([]);
  });

  it("tenant B's keys see and change nothing of tenant A, on every route", async () => {
    for (const [route, check] of Object.entries(checks)) {
      try {
        await check();
      } catch (err) {
        throw new Error(`${route}: ${(err as Error).message}`, { cause: err });
      }
    }
    // A's data, keys and feedback are exactly as before B's calls, and A's keys still work.
    expect(await snapshot(a)).toEqual(before);
    expect((await t.call('GET', `/v1/jobs/${aJobId}`, undefined, a)).json().status).toBe('pending');
    expect((await t.call('GET', '/v1/metrics', undefined, bearer(aExtraSecret))).statusCode).toBe(200);
    // And the other way round: A does not see B's copy of its task.
    const exported = (await t.call('GET', '/v1/export', undefined, a)).json();
    expect(exported.records.map((r: { task: string }) => r.task)).not.toContain('overwritten?');
    const recalled = (await t.call('POST', '/v1/recall', { task: TASK_A, limit: 50, readonly: true }, a)).json();
    expect(recalled.matches.map((m: { pattern_key: string }) => m.pattern_key).every((k: string) => aPatternKeys.includes(k))).toBe(true);
  });
});
