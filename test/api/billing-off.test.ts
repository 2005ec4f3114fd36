import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { learnBody, startServer, type TestServer } from './helpers.js';

describe('billing off (no PAYMENT_SECRET_KEY): sandbox figures, nothing enforced', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(() => t.close());

  it('reports the sandbox plan with real usage figures', async () => {
    expect((await t.call('POST', '/v1/learn', learnBody('parse a csv file into rows'))).statusCode).toBe(200);
    const res = await t.call('GET', '/v1/billing/status');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      plan_tier: 'sandbox', status: 'active', billing_interval: 'month', billing_enabled: false,
      eval_runs_used: 0, eval_runs_limit: 500, patterns_used: 1, patterns_limit: 5000,
      projects_used: 1, projects_limit: 1, overage_enabled: false, overage_budget_cap_cents: null,
    });
    expect(res.json().period_end).toMatch(/^\d{4}-\d\d-01T00:00:00.000Z$/);
  });

  it.each([
    ['POST', '/v1/billing/checkout', { price_id: 'price_x', success_url: 'https://a.test/ok', cancel_url: 'https://a.test/no' }],
    ['GET', '/v1/billing/portal?return_url=https://a.test/back', undefined],
    ['PATCH', '/v1/billing/overage', { enabled: true }],
  ] as const)('%s %s answers 501 naming PAYMENT_SECRET_KEY', async (method, url, body) => {
    const res = await t.call(method, url, body);
    expect(res.statusCode).toBe(501);
    expect(res.json().detail).toContain('PAYMENT_SECRET_KEY');
  });

  it('refuses payment events with 501 and enforces no plan feature', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/v1/billing/webhook', payload: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(501);
    // Export needs pro when billing is on; off, the sandbox tenant may use it.
    expect((await t.call('GET', '/v1/export')).statusCode).toBe(200);
  });
});
