/**
 * Billing arithmetic (docs/behavior.md "Billing"):
 * plans and their quotas, UTC months, overage blocks and the budget cap, dunning stages, and
 * how a payment event changes a tenant's account. Pure: time always comes in as an argument.
 */
import { DAY_MS } from './retention.js';

export const PLAN_TIERS = ['sandbox', 'pro', 'team', 'enterprise'] as const;
export type PlanTier = (typeof PLAN_TIERS)[number];
export type BillingInterval = 'month' | 'year';
export type SubscriptionStatus = 'active' | 'past_due' | 'canceled';
export type PlanFeature = 'async_jobs' | 'governance_export' | 'oidc';
export type QuotaMetric = 'eval_runs' | 'patterns' | 'projects';

/** Overage price: `block_cents` per started block of `block_runs` eval runs beyond the quota. */
export interface OveragePrice {
  block_runs: number;
  block_cents: number;
  /** Whether a budget cap may be set (team only). */
  cap_allowed: boolean;
}

export interface PlanDefinition {
  /** null: unlimited (enterprise's "custom"). */
  projects: number | null;
  eval_runs: number | null;
  patterns: number | null;
  overage: OveragePrice | null;
  features: readonly PlanFeature[];
}

export const PLANS: Record<PlanTier, PlanDefinition> = {
  sandbox: { projects: 1, eval_runs: 500, patterns: 5_000, overage: null, features: [] },
  pro: {
    projects: 3, eval_runs: 3_000, patterns: 50_000,
    overage: { block_runs: 500, block_cents: 500, cap_allowed: false },
    features: ['async_jobs', 'governance_export'],
  },
  team: {
    projects: 15, eval_runs: 15_000, patterns: 500_000,
    overage: { block_runs: 5_000, block_cents: 2_500, cap_allowed: true },
    features: ['async_jobs', 'governance_export'],
  },
  enterprise: { projects: null, eval_runs: null, patterns: null, overage: null, features: ['async_jobs', 'governance_export', 'oidc'] },
};

/** The lowest plan that has a feature (named in 403 messages). */
export function lowestPlanWith(feature: PlanFeature): PlanTier {
  return PLAN_TIERS.find((tier) => PLANS[tier].features.includes(feature)) ?? 'enterprise';
}

/** Days of grace after a failed payment before the API answers 402. */
export const GRACE_DAYS = 7;
/** From this day of the grace period on, a `dunning_event` warning is logged once a day. */
export const DUNNING_WARNING_DAY = 5;

/** One tenant's subscription and overage settings. */
export interface BillingAccount {
  tenant_id: string;
  plan_tier: PlanTier;
  status: SubscriptionStatus;
  billing_interval: BillingInterval;
  customer_id: string | null;
  subscription_id: string | null;
  /** End of the paid period (ISO); null: end of the current UTC month. */
  period_end: string | null;
  /** When the first unpaid failure of the current dunning run happened (ISO). */
  past_due_since: string | null;
  /** Time of the newest payment event applied; older events arriving later change nothing. */
  last_event_at: string | null;
  /** UTC day (`YYYY-MM-DD`) of the last `dunning_event` warning, so each day logs once. */
  dunning_logged_on: string | null;
  overage_enabled: boolean;
  overage_budget_cap_cents: number | null;
  updated_at: string;
}

export function newAccount(tenantId: string, now: Date): BillingAccount {
  return {
    tenant_id: tenantId, plan_tier: 'sandbox', status: 'active', billing_interval: 'month',
    customer_id: null, subscription_id: null, period_end: null, past_due_since: null, last_event_at: null, dunning_logged_on: null,
    overage_enabled: false, overage_budget_cap_cents: null, updated_at: now.toISOString(),
  };
}

/** `YYYY-MM-01`: the UTC month usage is counted in. */
export function monthStart(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` of the first day of the next UTC month (the spec's reset_date). */
export function resetDate(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
}

/** The subscription's period end, or the end of the UTC usage month when there is none. */
export function periodEnd(account: BillingAccount, now: Date): string {
  return account.period_end ?? new Date(`${resetDate(now)}T00:00:00.000Z`).toISOString();
}

/** Limits reported in the status body: -1 stands for unlimited (the fields are ints). */
export function reportedLimit(limit: number | null): number {
  return limit ?? -1;
}

/** Started overage blocks for `used` eval runs in a month (0 within the quota or without overage). */
export function overageBlocks(plan: PlanTier, used: number): number {
  const def = PLANS[plan];
  if (!def.overage || def.eval_runs === null || used <= def.eval_runs) return 0;
  return Math.ceil((used - def.eval_runs) / def.overage.block_runs);
}

export function overageCents(plan: PlanTier, used: number): number {
  const price = PLANS[plan].overage;
  return price ? overageBlocks(plan, used) * price.block_cents : 0;
}

/**
 * The most eval runs the month may reach: the quota without overage; with overage and a cap,
 * the runs whose started blocks stay within the cap (a run that would start a block past the
 * cap is refused); with overage and no cap, unlimited (null).
 */
export function maxEvalRuns(account: Pick<BillingAccount, 'plan_tier' | 'overage_enabled' | 'overage_budget_cap_cents'>): number | null {
  const def = PLANS[account.plan_tier];
  if (def.eval_runs === null) return null;
  if (!account.overage_enabled || !def.overage) return def.eval_runs;
  const cap = def.overage.cap_allowed ? account.overage_budget_cap_cents : null;
  if (cap === null) return null;
  return def.eval_runs + Math.floor(cap / def.overage.block_cents) * def.overage.block_runs;
}

/** Which refusal a run at `maxEvalRuns` gets: the plain quota, or the overage budget cap. */
export function evalRunRefusal(account: Pick<BillingAccount, 'plan_tier' | 'overage_enabled' | 'overage_budget_cap_cents'>): 'quota_exceeded' | 'overage_budget_cap_reached' {
  return maxEvalRuns(account) === PLANS[account.plan_tier].eval_runs ? 'quota_exceeded' : 'overage_budget_cap_reached';
}

export type DunningStage = { stage: 'ok' } | { stage: 'grace'; day: number } | { stage: 'warning'; day: number } | { stage: 'blocked'; day: number };

/** Where a past-due tenant stands: days 0-4 grace, days 5-6 warnings, day 7 on 402. */
export function dunningStage(account: Pick<BillingAccount, 'status' | 'past_due_since'>, now: Date): DunningStage {
  if (account.status !== 'past_due' || account.past_due_since === null) return { stage: 'ok' };
  const elapsed = now.getTime() - Date.parse(account.past_due_since);
  const day = Math.max(0, Math.floor(elapsed / DAY_MS));
  if (elapsed >= GRACE_DAYS * DAY_MS) return { stage: 'blocked', day };
  if (day >= DUNNING_WARNING_DAY) return { stage: 'warning', day };
  return { stage: 'grace', day };
}

/** `YYYY-MM-DD` (UTC): the once-a-day key of dunning warnings. */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** A payment processor event, reduced to what billing needs. */
export type PaymentEvent =
  | { kind: 'checkout_completed'; id: string; at: string; tenant_id: string; customer_id: string | null; subscription_id: string | null; price_id: string | null }
  | { kind: 'payment_failed'; id: string; at: string; customer_id: string }
  | { kind: 'payment_succeeded'; id: string; at: string; customer_id: string; period_end: string | null }
  | { kind: 'subscription_deleted'; id: string; at: string; customer_id: string }
  | { kind: 'invoice_created'; id: string; at: string; customer_id: string; invoice_id: string }
  | { kind: 'ignored'; id: string; at: string; type: string };

export interface PricePlan {
  plan: PlanTier;
  interval: BillingInterval;
}

/**
 * The account after a state-changing event; `null` when the event changes nothing (older than
 * the newest event applied, an unknown price, or not a state change). Events are ordered by
 * their own time, so a late delivery of an old event cannot undo a newer one.
 */
export function applyPaymentEvent(account: BillingAccount, event: PaymentEvent, price: PricePlan | null = null): BillingAccount | null {
  if (event.kind === 'ignored' || event.kind === 'invoice_created') return null;
  if (account.last_event_at !== null && Date.parse(event.at) < Date.parse(account.last_event_at)) return null;
  const base = { ...account, last_event_at: event.at, updated_at: event.at };
  switch (event.kind) {
    case 'checkout_completed':
      if (!price) return null;
      return {
        ...base, plan_tier: price.plan, billing_interval: price.interval, status: 'active', past_due_since: null,
        customer_id: event.customer_id ?? account.customer_id, subscription_id: event.subscription_id ?? account.subscription_id,
      };
    case 'payment_failed':
      // Further failures (processor retries on days 3, 5, 7) keep the grace period's start.
      return { ...base, status: 'past_due', past_due_since: account.past_due_since ?? event.at };
    case 'payment_succeeded':
      return { ...base, status: 'active', past_due_since: null, period_end: event.period_end ?? account.period_end };
    case 'subscription_deleted':
      return {
        ...base, plan_tier: 'sandbox', billing_interval: 'month', status: 'canceled', past_due_since: null,
        subscription_id: null, period_end: null, overage_enabled: false, overage_budget_cap_cents: null,
      };
  }
}
