/**
 * The plan's pattern quota is per tenant, while learn and import lock per project: concurrent
 * learns and imports in two projects of one tenant, racing at the limit, must together stop
 * exactly at it (docs/behavior.md "Billing"). On both storages; outcomes are exact whatever
 * order the requests run in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { billingEnv, seedPatterns, useFakePayments } from './billing-support.js';
import { learnBody, ManualClock, startServer, type TestServer } from './helpers.js';

const hasPg = await requirePostgres('billing pattern quota across projects');
const payments = await useFakePayments();

const SANDBOX_PATTERNS = 5000;
const project = (id: string) => ({ 'x-project-id': id });


describe.each(['json', 'postgres'] as const)('tenant pattern quota across projects (%s storage, sandbox plan)', (kind) => {
  let t: TestServer;
  let db: TestDatabase | null = null;
  let dbUrl: string | null = null;
  const clock = new ManualClock(new Date('2025-06-10T12:00:00.000Z'));

  beforeAll(async () => {
    if (kind === 'postgres') {
      if (!hasPg) return;
      db = await createTestDatabase('billing_race');
      dbUrl = (await createMigratedSchema(db, 'r')).url;
    }
    const env = { ...billingEnv(payments), SERVICE_RATE_LIMIT_EXPENSIVE: '1000', ...(dbUrl ? { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: dbUrl } : {}) };
    t = await startServer(env, { clock });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it.skipIf(kind === 'postgres' && !hasPg)('concurrent imports, then learns, in two projects stop exactly at the limit', async () => {
    await seedPatterns(t, dbUrl, SANDBOX_PATTERNS - 6, 'alpha');
    const refusal = (current: number) => ({ error: 'quota_exceeded', metric: 'patterns', current, limit: SANDBOX_PATTERNS, reset_date: '2025-07-01' });

    // Room for 6: two imports of 4 each, one per project; only one fits.
    const records = (name: string) => ({ records: ['first', 'second', 'third', 'fourth'].map((n) => ({ task: `${name} import ${n} record`, code: 'x', eval_score: 6 })) });
    const imports = await Promise.all([
      t.call('POST', '/v1/import', records('alpha'), project('alpha')),
      t.call('POST', '/v1/import', records('beta'), project('beta')),
    ]);
    expect(imports.map((r) => r.statusCode).sort()).toEqual([200, 429]);
    expect(imports.find((r) => r.statusCode === 429)!.json()).toMatchObject(refusal(SANDBOX_PATTERNS - 2));

    // Room for 2: twelve learns, six per project, all in flight at once.
    const learns = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        t.call('POST', '/v1/learn', learnBody(`race learn number ${i} of the quota test`), project(i % 2 ? 'beta' : 'alpha'))),
    );
    const statuses = learns.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    for (const r of learns.filter((x) => x.statusCode === 200)) expect(r.json().stored).toBe(true);
    for (const r of learns.filter((x) => x.statusCode === 429)) expect(r.json()).toMatchObject(refusal(SANDBOX_PATTERNS));

    const { storage } = t.app.deps;
    const stored = await Promise.all(['alpha', 'beta'].map((p) => storage.patterns.count({ tenant_id: 'default', project_id: p })));
    expect(stored[0] + stored[1]).toBe(SANDBOX_PATTERNS);
    expect((await t.call('GET', '/v1/billing/status', undefined, project('alpha'))).json().patterns_used).toBe(SANDBOX_PATTERNS);
  });
});
