import { describe, expect, it } from 'vitest';
import {
  applyPaymentEvent, dunningStage, evalRunRefusal, maxEvalRuns, monthStart, newAccount, overageBlocks, overageCents, resetDate,
  type BillingAccount,
} from '../../src/core/billing.js';

const at = (iso: string) => new Date(iso);
const account = (over: Partial<BillingAccount> = {}): BillingAccount => ({ ...newAccount('t', at('2025-01-01T00:00:00Z')), ...over });

describe('billing arithmetic', () => {
  it('months and reset dates are UTC', () => {
    expect(monthStart(at('2025-03-31T23:59:59.999Z'))).toBe('2025-03-01');
    expect(resetDate(at('2025-03-31T23:59:59.999Z'))).toBe('2025-04-01');
    expect(resetDate(at('2025-12-15T00:00:00Z'))).toBe('2026-01-01');
  });

  it('overage: pro 5 USD per started 500 runs, team 25 USD per started 5,000, none on sandbox', () => {
    expect(overageBlocks('pro', 3000)).toBe(0);
    expect(overageBlocks('pro', 3001)).toBe(1);
    expect(overageBlocks('pro', 3500)).toBe(1);
    expect(overageBlocks('pro', 3501)).toBe(2);
    expect(overageCents('pro', 3501)).toBe(1000);
    expect(overageCents('team', 15_001)).toBe(2500);
    expect(overageCents('team', 25_001)).toBe(7500);
    expect(overageCents('sandbox', 10_000)).toBe(0);
  });

  it('the most runs a month may reach: quota, unlimited with overage, bounded by the cap on team', () => {
    expect(maxEvalRuns(account())).toBe(500);
    expect(maxEvalRuns(account({ plan_tier: 'pro' }))).toBe(3000);
    expect(maxEvalRuns(account({ plan_tier: 'pro', overage_enabled: true }))).toBeNull();
    expect(maxEvalRuns(account({ plan_tier: 'team', overage_enabled: true, overage_budget_cap_cents: 2499 }))).toBe(15_000);
    expect(maxEvalRuns(account({ plan_tier: 'team', overage_enabled: true, overage_budget_cap_cents: 5000 }))).toBe(25_000);
    expect(evalRunRefusal(account({ plan_tier: 'team', overage_enabled: true, overage_budget_cap_cents: 5000 }))).toBe('overage_budget_cap_reached');
    expect(evalRunRefusal(account({ plan_tier: 'pro' }))).toBe('quota_exceeded');
    expect(maxEvalRuns(account({ plan_tier: 'enterprise' }))).toBeNull();
  });

  it('dunning: grace to day 4, warnings on days 5-6, blocked from exactly 7 days', () => {
    const pastDue = account({ status: 'past_due', past_due_since: '2025-01-01T00:00:00.000Z' });
    expect(dunningStage(pastDue, at('2025-01-05T23:59:59Z')).stage).toBe('grace');
    expect(dunningStage(pastDue, at('2025-01-06T00:00:00Z'))).toEqual({ stage: 'warning', day: 5 });
    expect(dunningStage(pastDue, at('2025-01-07T23:59:59.999Z')).stage).toBe('warning');
    expect(dunningStage(pastDue, at('2025-01-08T00:00:00Z'))).toEqual({ stage: 'blocked', day: 7 });
    expect(dunningStage(account(), at('2030-01-01T00:00:00Z')).stage).toBe('ok');
  });

  it('events apply in their own time order; repeated failures keep the grace start', () => {
    const pro = applyPaymentEvent(account(), {
      kind: 'checkout_completed', id: 'e1', at: '2025-01-02T00:00:00.000Z', tenant_id: 't', customer_id: 'c', subscription_id: 's', price_id: 'p',
    }, { plan: 'pro', interval: 'year' })!;
    expect(pro).toMatchObject({ plan_tier: 'pro', billing_interval: 'year', customer_id: 'c', status: 'active' });
    const failed = applyPaymentEvent(pro, { kind: 'payment_failed', id: 'e2', at: '2025-01-03T00:00:00.000Z', customer_id: 'c' })!;
    const again = applyPaymentEvent(failed, { kind: 'payment_failed', id: 'e3', at: '2025-01-06T00:00:00.000Z', customer_id: 'c' })!;
    expect(again.past_due_since).toBe('2025-01-03T00:00:00.000Z');
    expect(applyPaymentEvent(again, { kind: 'payment_succeeded', id: 'e0', at: '2025-01-02T12:00:00.000Z', customer_id: 'c', period_end: null })).toBeNull();
    const deleted = applyPaymentEvent(again, { kind: 'subscription_deleted', id: 'e4', at: '2025-01-20T00:00:00.000Z', customer_id: 'c' })!;
    expect(deleted).toMatchObject({ plan_tier: 'sandbox', status: 'canceled', past_due_since: null, overage_enabled: false });
    expect(applyPaymentEvent(account(), { kind: 'checkout_completed', id: 'e5', at: '2025-01-02T00:00:00.000Z', tenant_id: 't', customer_id: 'c', subscription_id: null, price_id: 'x' }, null)).toBeNull();
  });
});
