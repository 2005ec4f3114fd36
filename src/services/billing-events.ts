import { applyPaymentEvent, newAccount, overageBlocks, PLANS, type PaymentEvent } from '../core/billing.js';
import { NotConfiguredError } from '../core/errors.js';
import type { WebhookResponse } from '../contracts/billing.js';
import type { Billing } from './billing.js';

/**
 * POST /v1/billing/webhook: verifies the signature over the raw body (InvalidPaymentSignatureError
 * → 400, nothing changed), processes each event id once (a replay answers 200 and changes
 * nothing), and resolves out-of-order deliveries by the event's own time. A failure while
 * applying forgets the event id again, so the processor's retry is applied.
 */
export async function receivePaymentEvent(billing: Billing, rawBody: Buffer, signature: string | undefined): Promise<WebhookResponse> {
  const payments = billing.deps.payments;
  if (!payments) throw new NotConfiguredError('billing is off on this server: set PAYMENT_SECRET_KEY');
  if (!billing.deps.config.payment.webhookSecret) throw new NotConfiguredError('payment events need PAYMENT_WEBHOOK_SECRET');
  const event = payments.parseEvent(rawBody, signature);
  const { repo, logger } = billing.deps;
  if (!(await repo.claimEvent(event.id, event.kind))) {
    logger.info({ event_id: event.id }, 'payment event already processed');
    return { received: true, applied: false };
  }
  try {
    const applied = await applyEvent(billing, event);
    logger.info({ event_id: event.id, kind: event.kind, applied }, 'payment event processed');
    return { received: true, applied };
  } catch (err) {
    await repo.releaseEvent(event.id).catch(() => undefined);
    throw err;
  }
}

async function applyEvent(billing: Billing, event: PaymentEvent): Promise<boolean> {
  const { repo, config, logger } = billing.deps;
  if (event.kind === 'ignored') return false;
  if (event.kind === 'checkout_completed') {
    const price = event.price_id === null ? null : (config.payment.prices[event.price_id] ?? null);
    if (!price) logger.warn({ event_id: event.id, price_id: event.price_id }, 'checkout completed for a price no PAYMENT_PRICE_* names');
    return change(billing, event.tenant_id, event, price);
  }
  const account = await repo.findByCustomer(event.customer_id);
  if (!account) {
    logger.warn({ event_id: event.id, kind: event.kind }, 'payment event for a customer no tenant has');
    return false;
  }
  if (event.kind === 'invoice_created') return invoiceOverage(billing, account.tenant_id, account.plan_tier, event);
  return change(billing, account.tenant_id, event, null);
}

async function change(billing: Billing, tenantId: string, event: PaymentEvent, price: Parameters<typeof applyPaymentEvent>[2]): Promise<boolean> {
  const { changed } = await billing.deps.repo.updateAccount(
    tenantId,
    () => newAccount(tenantId, billing.deps.clock.now()),
    (current) => applyPaymentEvent(current, event, price),
  );
  return changed;
}

/**
 * `invoice.created`: every started overage block not invoiced yet becomes one invoice item per
 * month. The blocks are claimed first (compare-and-set, so two deliveries or processes cannot
 * both claim them) and the claim is undone when the processor refuses the item.
 */
async function invoiceOverage(
  billing: Billing,
  tenantId: string,
  plan: keyof typeof PLANS,
  event: Extract<PaymentEvent, { kind: 'invoice_created' }>,
): Promise<boolean> {
  const price = PLANS[plan].overage;
  const { repo, payments } = billing.deps;
  if (!price || !payments) return false;
  let added = false;
  for (const usage of await repo.usageMonths(tenantId)) {
    if (usage.month > event.at.slice(0, 10)) continue;
    const blocks = overageBlocks(plan, usage.eval_runs);
    if (blocks <= usage.billed_blocks) continue;
    if (!(await repo.setBilledBlocks(tenantId, usage.month, usage.billed_blocks, blocks))) continue;
    const count = blocks - usage.billed_blocks;
    try {
      await payments.addInvoiceItem({
        customer_id: event.customer_id,
        invoice_id: event.invoice_id,
        amount_cents: count * price.block_cents,
        description: `Eval-run overage ${usage.month.slice(0, 7)}: ${count} block(s) of ${price.block_runs} runs`,
        idempotency_key: `overage:${tenantId}:${usage.month}:${usage.billed_blocks}-${blocks}`,
      });
    } catch (err) {
      await repo.setBilledBlocks(tenantId, usage.month, blocks, usage.billed_blocks).catch(() => undefined);
      throw err;
    }
    added = true;
  }
  return added;
}
