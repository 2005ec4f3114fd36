import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startServer, type TestServer } from './helpers.js';
import {
  billingEnv, checkoutCompleted, invoice, PRICE_PRO, RecordingLogger, sendEvent, subscription, useFakePayments,
} from './billing-support.js';

const DAY = 86_400_000;
const fake = await useFakePayments();

describe('subscription state table, walked with a settable clock', () => {
  let t: TestServer;
  const clock = new ManualClock(new Date('2025-03-10T12:00:00.000Z'));
  const logger = new RecordingLogger();
  const status = async () => (await t.call('GET', '/v1/billing/status')).json();

  beforeAll(async () => {
    t = await startServer(billingEnv(fake), { clock, logger });
  });
  afterAll(() => t.close());

  it('new tenant: sandbox; async jobs and export need pro (403 naming the plan)', async () => {
    expect(await status()).toMatchObject({ plan_tier: 'sandbox', status: 'active', billing_enabled: true, eval_runs_limit: 500, reset_date: '2025-04-01' });
    const exp = await t.call('GET', '/v1/export');
    expect(exp.statusCode).toBe(403);
    expect(exp.json().detail).toContain('pro plan');
    const job = await t.call('POST', '/v1/aging', undefined, { prefer: 'respond-async' });
    expect(job.statusCode).toBe(403);
    expect(job.json().detail).toMatch(/async jobs needs the pro plan/);
  });

  it('checkout goes through the SDK with automatic tax and tax-id collection; unknown price → 422', async () => {
    const bad = await t.call('POST', '/v1/billing/checkout', { price_id: 'price_nope', success_url: 'https://app.test/ok', cancel_url: 'https://app.test/no' });
    expect(bad.statusCode).toBe(422);
    const res = await t.call('POST', '/v1/billing/checkout', { price_id: PRICE_PRO, success_url: 'https://app.test/ok', cancel_url: 'https://app.test/no' });
    expect(res.statusCode).toBe(200);
    expect(res.json().checkout_url).toMatch(/^https:\/\/checkout\.example\.test\/pay\/cs_test_/);
    const call = fake.calls.find((c) => c.path === '/v1/checkout/sessions')!;
    expect(call.form.get('automatic_tax[enabled]')).toBe('true');
    expect(call.form.get('tax_id_collection[enabled]')).toBe('true');
    expect(call.form.get('line_items[0][price]')).toBe(PRICE_PRO);
    expect(call.form.get('metadata[tenant_id]')).toBe('default');
    // No customer yet: the portal has nothing to show.
    expect((await t.call('GET', '/v1/billing/portal?return_url=https://app.test/back')).statusCode).toBe(409);
  });

  it('checkout completed → pro; the portal opens for its customer', async () => {
    const res = await sendEvent(t, 'checkout.session.completed', clock.now(), checkoutCompleted('default', 'cus_1', PRICE_PRO));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ received: true, applied: true });
    expect(await status()).toMatchObject({ plan_tier: 'pro', status: 'active', eval_runs_limit: 3000, patterns_limit: 50000, projects_limit: 3 });
    const portal = await t.call('GET', '/v1/billing/portal?return_url=https://app.test/back');
    expect(portal.statusCode).toBe(200);
    expect(portal.json().portal_url).toMatch(/^https:\/\/billing\.example\.test\//);
    expect(fake.calls.find((c) => c.path === '/v1/billing_portal/sessions')!.form.get('customer')).toBe('cus_1');
    expect((await t.call('GET', '/v1/export')).statusCode).toBe(200);
  });

  it('payment fails → past_due with a 7-day grace: the API keeps working, warnings once a day from day 5, 402 after day 7', async () => {
    clock.advance(DAY);
    expect((await sendEvent(t, 'invoice.payment_failed', clock.now(), invoice('cus_1'))).statusCode).toBe(200);
    expect(await status()).toMatchObject({ plan_tier: 'pro', status: 'past_due' });

    clock.advance(4 * DAY + 23 * 3_600_000); // day 4, 23h: still quiet
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(200);
    expect(logger.dunning()).toHaveLength(0);

    clock.advance(3_600_000); // day 5
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(200);
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(200);
    expect(logger.dunning()).toHaveLength(1);
    expect(logger.dunning()[0].obj.dunning_event).toMatchObject({ tenant_id: 'default', day: 5 });

    clock.advance(DAY); // day 6: one more
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(200);
    expect(logger.dunning()).toHaveLength(2);

    clock.advance(DAY - 1); // one millisecond before the 7 days are over
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(200);
    clock.advance(1);
    const blocked = await t.call('GET', '/v1/metrics');
    expect(blocked.statusCode).toBe(402);
    expect(blocked.json()).toMatchObject({ error: 'payment_required' });
    expect(blocked.json().message).toContain('past due');
    // Billing and health stay reachable, so the tenant can pay.
    expect((await t.call('GET', '/v1/billing/status')).statusCode).toBe(200);
    expect((await t.call('GET', '/v1/health')).statusCode).toBe(200);
  });

  it('payment succeeded → active again; subscription deleted → sandbox', async () => {
    expect((await sendEvent(t, 'invoice.payment_succeeded', clock.now(), invoice('cus_1'))).statusCode).toBe(200);
    expect(await status()).toMatchObject({ plan_tier: 'pro', status: 'active' });
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(200);

    clock.advance(DAY);
    await sendEvent(t, 'invoice.payment_failed', clock.now(), invoice('cus_1'));
    clock.advance(14 * DAY);
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(402);
    await sendEvent(t, 'customer.subscription.deleted', clock.now(), subscription('cus_1'));
    expect(await status()).toMatchObject({ plan_tier: 'sandbox', status: 'canceled', eval_runs_limit: 500 });
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(200);
  });
});

describe('payment events: signatures, replays, order', () => {
  let t: TestServer;
  const clock = new ManualClock(new Date('2025-06-01T08:00:00.000Z'));
  beforeAll(async () => {
    t = await startServer(billingEnv(fake), { clock });
  });
  afterAll(() => t.close());
  const plan = async () => (await t.call('GET', '/v1/billing/status')).json().plan_tier as string;

  it('a bad, missing or stale signature → 400 and nothing changes', async () => {
    const event = checkoutCompleted('default', 'cus_sig', PRICE_PRO);
    expect((await sendEvent(t, 'checkout.session.completed', clock.now(), event, { secret: 'whsec_wrong' })).statusCode).toBe(400);
    const stale = await sendEvent(t, 'checkout.session.completed', clock.now(), event, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
    expect(stale.statusCode).toBe(400);
    const missing = await t.server.inject({ method: 'POST', url: '/v1/billing/webhook', payload: '{}', headers: { 'content-type': 'application/json' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().detail).toMatch(/Stripe-Signature/);
    expect(await plan()).toBe('sandbox');
  });

  it('each event id is processed once: a replay answers 200 and changes nothing', async () => {
    const at = clock.now();
    expect((await sendEvent(t, 'checkout.session.completed', at, checkoutCompleted('default', 'cus_r', PRICE_PRO), { id: 'evt_once' })).json().applied).toBe(true);
    expect((await sendEvent(t, 'customer.subscription.deleted', new Date(at.getTime() + 1000), subscription('cus_r'), { id: 'evt_del' })).json().applied).toBe(true);
    expect(await plan()).toBe('sandbox');
    const replay = await sendEvent(t, 'checkout.session.completed', new Date(at.getTime() + 5000), checkoutCompleted('default', 'cus_r', PRICE_PRO), { id: 'evt_once' });
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual({ received: true, applied: false });
    expect(await plan()).toBe('sandbox');
  });

  it('out-of-order events are resolved by their own time', async () => {
    const base = clock.now().getTime() + 60_000;
    await sendEvent(t, 'checkout.session.completed', new Date(base), checkoutCompleted('default', 'cus_o', PRICE_PRO));
    // Succeeded (newer) arrives before failed (older): the older one changes nothing.
    await sendEvent(t, 'invoice.payment_succeeded', new Date(base + 20_000), invoice('cus_o'));
    const late = await sendEvent(t, 'invoice.payment_failed', new Date(base + 10_000), invoice('cus_o'));
    expect(late.json()).toEqual({ received: true, applied: false });
    expect((await t.call('GET', '/v1/billing/status')).json()).toMatchObject({ plan_tier: 'pro', status: 'active' });
  });
});

describe('dunning sweep', () => {
  it('logs day-5 warnings for past-due tenants that send no requests, once a day', async () => {
    const clock = new ManualClock(new Date('2025-08-01T00:00:00.000Z'));
    const logger = new RecordingLogger();
    const t = await startServer(billingEnv(fake), { clock, logger });
    try {
      await sendEvent(t, 'checkout.session.completed', clock.now(), checkoutCompleted('default', 'cus_sweep', PRICE_PRO));
      await sendEvent(t, 'invoice.payment_failed', clock.now(), invoice('cus_sweep'));
      const billing = t.app.deps.billing!;
      clock.advance(4 * DAY);
      await billing.sweepDunning();
      expect(logger.dunning()).toHaveLength(0);
      clock.advance(DAY);
      await billing.sweepDunning();
      await billing.sweepDunning();
      expect(logger.dunning()).toHaveLength(1);
      clock.advance(DAY);
      await billing.sweepDunning();
      expect(logger.dunning().map((l) => (l.obj.dunning_event as { day: number }).day)).toEqual([5, 6]);
    } finally {
      await t.close();
    }
  });
});
