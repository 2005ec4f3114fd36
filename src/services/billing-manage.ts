import { newAccount, PLANS } from '../core/billing.js';
import { ConflictError, ForbiddenError, NotConfiguredError, ValidationError } from '../core/errors.js';
import type { Scope } from '../core/types.js';
import type { CheckoutRequest, CheckoutResponse, OverageRequest, OverageResponse, PortalResponse } from '../contracts/billing.js';
import type { PaymentProcessor } from '../ports/payments.js';
import type { Billing } from './billing.js';

const BILLING_OFF = 'billing is off on this server: set PAYMENT_SECRET_KEY (hosted deployments only)';

function processorOf(billing: Billing): PaymentProcessor {
  if (!billing.deps.payments) throw new NotConfiguredError(BILLING_OFF);
  return billing.deps.payments;
}

/** POST /v1/billing/checkout: a hosted checkout page for one of the configured prices. */
export async function startCheckout(
  billing: Billing,
  scope: Scope,
  input: CheckoutRequest,
): Promise<CheckoutResponse> {
  const payments = processorOf(billing);
  if (!(input.price_id in billing.deps.config.payment.prices)) {
    const known = Object.keys(billing.deps.config.payment.prices);
    throw new ValidationError(`unknown price_id: ${known.length ? `expected one of ${known.join(', ')}` : 'no PAYMENT_PRICE_* variable is set'}`, [
      { path: 'price_id', message: 'not a configured price' },
    ]);
  }
  const account = await billing.account(scope.tenant_id);
  const { url } = await payments.createCheckout({ tenant_id: scope.tenant_id, customer_id: account.customer_id, ...input });
  return { checkout_url: url };
}

/** GET /v1/billing/portal: the processor's self-service page for the tenant's customer. */
export async function openPortal(billing: Billing, scope: Scope, returnUrl: string): Promise<PortalResponse> {
  const payments = processorOf(billing);
  const account = await billing.account(scope.tenant_id);
  if (account.customer_id === null) throw new ConflictError('this tenant has no subscription yet: start one with POST /v1/billing/checkout');
  const { url } = await payments.createPortal({ customer_id: account.customer_id, return_url: returnUrl });
  return { portal_url: url };
}

/**
 * PATCH /v1/billing/overage: opt in or out of overage on pro and team; a budget cap (or null
 * to remove it) only on team. An omitted cap keeps the current one.
 */
export async function setOverage(
  billing: Billing,
  scope: Scope,
  input: OverageRequest,
): Promise<OverageResponse> {
  processorOf(billing);
  const now = billing.deps.clock.now();
  const { account } = await billing.deps.repo.updateAccount(scope.tenant_id, () => newAccount(scope.tenant_id, now), (current) => {
    const price = PLANS[current.plan_tier].overage;
    if (input.enabled && !price) {
      throw new ForbiddenError(`overage needs the pro or team plan; this tenant is on the ${current.plan_tier} plan`);
    }
    if (input.budget_cap_cents !== undefined && input.budget_cap_cents !== null && !price?.cap_allowed) {
      throw new ValidationError('a budget cap is only available on the team plan', [
        { path: 'budget_cap_cents', message: `not available on the ${current.plan_tier} plan` },
      ]);
    }
    const cap = input.budget_cap_cents === undefined ? current.overage_budget_cap_cents : input.budget_cap_cents;
    return { ...current, overage_enabled: input.enabled, overage_budget_cap_cents: price?.cap_allowed ? cap : null, updated_at: now.toISOString() };
  });
  return { overage_enabled: account.overage_enabled, overage_budget_cap_cents: account.overage_budget_cap_cents };
}
