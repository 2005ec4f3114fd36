import { z } from 'zod';

/** Wire schemas of docs/behavior.md "Billing". */

export const PlanTier = z.enum(['sandbox', 'pro', 'team', 'enterprise']);

/** Limits are ints; -1 means unlimited (enterprise). */
export const BillingStatusResponse = z.object({
  plan_tier: PlanTier,
  status: z.string(),
  billing_interval: z.enum(['month', 'year']),
  eval_runs_used: z.number().int(),
  eval_runs_limit: z.number().int(),
  patterns_used: z.number().int(),
  patterns_limit: z.number().int(),
  projects_used: z.number().int(),
  projects_limit: z.number().int(),
  period_end: z.string(),
  overage_enabled: z.boolean(),
  overage_budget_cap_cents: z.number().int().nullable(),
  /** (+) false without PAYMENT_SECRET_KEY: nothing is enforced. */
  billing_enabled: z.boolean(),
  /** (+) First day of the next UTC month, when monthly usage resets. */
  reset_date: z.string(),
});
export type BillingStatusResponse = z.infer<typeof BillingStatusResponse>;

const HttpUrl = z.url({ protocol: /^https?$/ });

export const CheckoutRequest = z.strictObject({
  price_id: z.string().min(1).max(200),
  success_url: HttpUrl,
  cancel_url: HttpUrl,
});
export type CheckoutRequest = z.infer<typeof CheckoutRequest>;

export const CheckoutResponse = z.object({ checkout_url: z.string() });
export type CheckoutResponse = z.infer<typeof CheckoutResponse>;

export const PortalQuery = z.object({ return_url: HttpUrl });

export const PortalResponse = z.object({ portal_url: z.string() });
export type PortalResponse = z.infer<typeof PortalResponse>;

export const OverageRequest = z.strictObject({
  enabled: z.boolean(),
  /** null removes the cap (team only); omitted keeps the current one. */
  budget_cap_cents: z.number().int().min(0).max(100_000_000).nullable().optional(),
});
export type OverageRequest = z.infer<typeof OverageRequest>;

export const OverageResponse = z.object({
  overage_enabled: z.boolean(),
  overage_budget_cap_cents: z.number().int().nullable(),
});
export type OverageResponse = z.infer<typeof OverageResponse>;

/** A payment event as the processor sends it (the route verifies the raw bytes first). */
export const WebhookEvent = z.object({ id: z.string(), type: z.string() }).passthrough();

export const WebhookResponse = z.object({ received: z.literal(true), applied: z.boolean() });
export type WebhookResponse = z.infer<typeof WebhookResponse>;
