import type { PaymentEvent } from '../core/billing.js';

/** The payment processor's signature over an event was missing, wrong or too old. */
export class InvalidPaymentSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPaymentSignatureError';
  }
}

export interface CheckoutRequest {
  tenant_id: string;
  price_id: string;
  success_url: string;
  cancel_url: string;
  /** The tenant's existing customer, reused so a plan change stays on one customer. */
  customer_id: string | null;
}

export interface InvoiceItemRequest {
  customer_id: string;
  invoice_id: string;
  amount_cents: number;
  description: string;
  /** Makes a retried call create the item once (the processor deduplicates by it). */
  idempotency_key: string;
}

/**
 * A hosted payment processor (Stripe in src/adapters/payments/stripe.ts). Only configured when
 * PAYMENT_SECRET_KEY is set; without it billing is off and nothing calls a processor.
 */
export interface PaymentProcessor {
  /** A hosted checkout page for a subscription to `price_id`, with automatic tax and tax-id collection. */
  createCheckout(request: CheckoutRequest): Promise<{ url: string }>;
  /** A self-service portal page for an existing customer. */
  createPortal(request: { customer_id: string; return_url: string }): Promise<{ url: string }>;
  /**
   * Verifies the signature header over the exact raw body and reduces the event to what billing
   * needs. Throws InvalidPaymentSignatureError when the header is missing, wrong or stale.
   */
  parseEvent(rawBody: Buffer, signatureHeader: string | undefined): PaymentEvent;
  /** Adds a line (overage) to a draft invoice. */
  addInvoiceItem(request: InvoiceItemRequest): Promise<void>;
}
