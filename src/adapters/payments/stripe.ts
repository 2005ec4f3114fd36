import Stripe from 'stripe';
import type { PaymentEvent } from '../../core/billing.js';
import { InvalidPaymentSignatureError, type CheckoutRequest, type InvoiceItemRequest, type PaymentProcessor } from '../../ports/payments.js';

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string | null;
  /** Another API address (a fake on loopback in tests); the SDK's host/port/protocol settings. */
  apiBaseUrl: string | null;
}

/** Seconds an event signature stays acceptable (the SDK's default, stated so it is visible). */
const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Stripe behind the PaymentProcessor port: the only file that knows Stripe's objects. */
export function createStripeProcessor(settings: StripeSettings): PaymentProcessor {
  const stripe = new Stripe(settings.secretKey, { ...addressOf(settings.apiBaseUrl), maxNetworkRetries: 2, timeout: 20_000 });
  return {
    async createCheckout(request: CheckoutRequest) {
      const session = await stripe.checkout.sessions.create({
        mode: 'subscription',
        line_items: [{ price: request.price_id, quantity: 1 }],
        success_url: request.success_url,
        cancel_url: request.cancel_url,
        // The completed-checkout event names the tenant and the price it bought.
        client_reference_id: request.tenant_id,
        metadata: { tenant_id: request.tenant_id, price_id: request.price_id },
        subscription_data: { metadata: { tenant_id: request.tenant_id } },
        automatic_tax: { enabled: true },
        tax_id_collection: { enabled: true },
        ...(request.customer_id ? { customer: request.customer_id, customer_update: { address: 'auto', name: 'auto' } } : {}),
      });
      if (!session.url) throw new Error('the payment processor returned a checkout session without a URL');
      return { url: session.url };
    },
    async createPortal(request) {
      const session = await stripe.billingPortal.sessions.create({ customer: request.customer_id, return_url: request.return_url });
      return { url: session.url };
    },
    parseEvent(rawBody: Buffer, signatureHeader: string | undefined): PaymentEvent {
      if (!settings.webhookSecret) throw new InvalidPaymentSignatureError('PAYMENT_WEBHOOK_SECRET is not set: payment events cannot be verified');
      if (!signatureHeader) throw new InvalidPaymentSignatureError('missing Stripe-Signature header');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(rawBody, signatureHeader, settings.webhookSecret, SIGNATURE_TOLERANCE_SECONDS);
      } catch (err) {
        throw new InvalidPaymentSignatureError(`payment event signature rejected: ${(err as Error).message}`);
      }
      return toPaymentEvent(event);
    },
    async addInvoiceItem(request: InvoiceItemRequest) {
      await stripe.invoiceItems.create(
        {
          customer: request.customer_id,
          invoice: request.invoice_id,
          amount: request.amount_cents,
          currency: 'usd',
          description: request.description,
        },
        { idempotencyKey: request.idempotency_key },
      );
    },
  };
}

function addressOf(baseUrl: string | null): { host?: string; port?: number; protocol?: 'http' | 'https' } {
  if (!baseUrl) return {};
  const u = new URL(baseUrl);
  const protocol = u.protocol === 'http:' ? 'http' : 'https';
  return { host: u.hostname, port: u.port ? Number(u.port) : protocol === 'http' ? 80 : 443, protocol };
}

function idOf(ref: string | { id: string } | null | undefined): string | null {
  if (ref === null || ref === undefined) return null;
  return typeof ref === 'string' ? ref : ref.id;
}

/** Only the fields billing uses; loosely typed because they vary across API versions. */
interface LooseObject {
  id?: string;
  customer?: string | { id: string } | null;
  subscription?: string | { id: string } | null;
  client_reference_id?: string | null;
  metadata?: Record<string, string> | null;
  lines?: { data?: Array<{ period?: { end?: number } }> };
}

function toPaymentEvent(event: Stripe.Event): PaymentEvent {
  const base = { id: event.id, at: new Date(event.created * 1000).toISOString() };
  const obj = event.data.object as unknown as LooseObject;
  const customer = idOf(obj.customer);
  switch (event.type) {
    case 'checkout.session.completed': {
      const tenant = obj.metadata?.tenant_id ?? obj.client_reference_id ?? null;
      if (!tenant) break;
      return {
        ...base, kind: 'checkout_completed', tenant_id: tenant, customer_id: customer,
        subscription_id: idOf(obj.subscription), price_id: obj.metadata?.price_id ?? null,
      };
    }
    case 'invoice.payment_failed':
      if (customer) return { ...base, kind: 'payment_failed', customer_id: customer };
      break;
    case 'invoice.payment_succeeded':
    case 'invoice.paid': {
      if (!customer) break;
      const end = obj.lines?.data?.[0]?.period?.end;
      return { ...base, kind: 'payment_succeeded', customer_id: customer, period_end: end ? new Date(end * 1000).toISOString() : null };
    }
    case 'customer.subscription.deleted':
      if (customer) return { ...base, kind: 'subscription_deleted', customer_id: customer };
      break;
    case 'invoice.created':
      if (customer && obj.id) return { ...base, kind: 'invoice_created', customer_id: customer, invoice_id: obj.id };
      break;
  }
  return { ...base, kind: 'ignored', type: event.type };
}
