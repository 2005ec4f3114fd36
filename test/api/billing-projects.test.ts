import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { bearer, perFileDatabase, provisionKey, startDbServer, type DbServer } from './db-auth-helpers.js';
import { billingEnv, checkoutCompleted, invoice, PRICE_PRO, sendEvent, useFakePayments } from './billing-support.js';
import { ManualClock } from './helpers.js';

const hasPg = await requirePostgres('billing projects quota');
const database = perFileDatabase('billing_projects');
const payments = await useFakePayments();
const DAY = 86_400_000;

describe.skipIf(!hasPg)('DB auth with billing on: project quota at key creation, per-tenant plans and dunning', () => {
  let t: DbServer;
  let acme: Record<string, string>;
  let beta: Record<string, string>;
  const clock = new ManualClock(new Date('2025-09-10T00:00:00.000Z'));
  const newKey = (project: string) => t.call('POST', '/v1/keys', { name: `key for ${project}`, role: 'editor', project_id: project }, acme);

  beforeAll(async () => {
    t = await startDbServer((await database.schema()).url, billingEnv(payments), { clock });
    acme = bearer((await provisionKey(t.keyStore, { tenant_id: 'acme', project_id: 'main', role: 'owner' })).secret);
    beta = bearer((await provisionKey(t.keyStore, { tenant_id: 'beta', project_id: 'main', role: 'owner' })).secret);
  });
  afterAll(async () => {
    await t?.close();
    await database.drop();
  });

  it('sandbox: keys for the existing project pass; a second project → 429 projects at the limit', async () => {
    expect((await newKey('main')).statusCode).toBeLessThan(300);
    const refused = await newKey('second');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: 'quota_exceeded', metric: 'projects', current: 1, limit: 1, reset_date: '2025-10-01' });
  });

  it('pro: three projects, the fourth → 429; the other tenant stays on sandbox', async () => {
    await sendEvent(t, 'checkout.session.completed', clock.now(), checkoutCompleted('acme', 'cus_acme', PRICE_PRO));
    expect((await newKey('second')).statusCode).toBeLessThan(300);
    expect((await newKey('third')).statusCode).toBeLessThan(300);
    expect((await newKey('fourth')).json()).toMatchObject({ error: 'quota_exceeded', metric: 'projects', current: 3, limit: 3 });
    expect((await t.call('GET', '/v1/billing/status', undefined, acme)).json()).toMatchObject({ plan_tier: 'pro', projects_used: 3 });
    expect((await t.call('GET', '/v1/billing/status', undefined, beta)).json()).toMatchObject({ plan_tier: 'sandbox', projects_used: 1 });
  });

  it("one tenant's unpaid subscription blocks only that tenant", async () => {
    await sendEvent(t, 'invoice.payment_failed', clock.now(), invoice('cus_acme'));
    clock.advance(7 * DAY);
    expect((await t.call('GET', '/v1/metrics', undefined, acme)).statusCode).toBe(402);
    expect((await t.call('GET', '/v1/metrics', undefined, beta)).statusCode).toBe(200);
  });
});
