import type { FastifyInstance } from 'fastify';
import { BillingStatusResponse } from '../../src/contracts/billing.js';
import { InvalidPaymentSignatureError } from '../../src/ports/payments.js';
import type { Billing } from '../../src/services/billing.js';
import { receivePaymentEvent } from '../../src/services/billing-events.js';
import { openPortal, setOverage, startCheckout } from '../../src/services/billing-manage.js';
import { authed } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';

/** Paths the past-due 402 never blocks: paying must stay possible, and probes must keep working. */
const UNGATED = /^\/v1\/(billing|health)(\/|$)/;

/**
 * docs/behavior.md "Billing" plus (+) the payment-event intake. Also installs the billing gate: on
 * every other authenticated route, a tenant past its grace period gets 402 (and OIDC callers
 * need the enterprise plan). The gate is a no-op while billing is off.
 */
export function billingRoutes(app: FastifyInstance, billing: Billing | undefined): void {
  if (!billing) return;

  app.addHook('preHandler', async (request) => {
    const url = request.routeOptions.url;
    if (!request.principal || url === undefined || UNGATED.test(url)) return;
    await billing.checkAccess(request.principal.tenant_id, request.principal.kind);
  });

  defineRoute(app, routes.billingStatus, {
    permission: 'billing', tag: 'billing', summary: 'Plan, subscription status and usage against the plan\'s limits (sandbox when billing is off).',
    handler: async (_input, request) => BillingStatusResponse.parse(await billing.status(authed(request).scope)),
  });

  defineRoute(app, routes.checkout, {
    permission: 'billing:manage', errors: [501],
    tag: 'billing', summary: 'Start a checkout for a plan (automatic tax, tax-id collection); 501 without PAYMENT_SECRET_KEY.',
    handler: ({ body }, request) => startCheckout(billing, authed(request).scope, body),
  });

  defineRoute(app, routes.portal, {
    permission: 'billing:manage', errors: [409, 501],
    tag: 'billing', summary: 'A link to the payment processor\'s customer portal.',
    handler: ({ query }, request) => openPortal(billing, authed(request).scope, query.return_url),
  });

  defineRoute(app, routes.setOverage, {
    permission: 'billing:manage', errors: [501],
    tag: 'billing', summary: 'Turn overage on or off and set the budget cap (cap on team only).',
    handler: ({ body }, request) => setOverage(billing, authed(request).scope, body),
  });

  // The signature covers the exact bytes sent, so this route reads its body raw (any media type).
  void app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    defineRoute(raw, routes.paymentWebhook, {
      public: true, rateClass: 'exempt', input: 'manual',
      errors: [400, 501],
      tag: 'billing', summary: 'Payment events from the processor, verified with the Stripe-Signature header (no API key).',
      description: 'The raw body is verified with PAYMENT_WEBHOOK_SECRET; a bad, missing or stale signature is a 400 and changes nothing; each event id is applied once.',
      handler: async (_input, request, reply) => {
        const signature = request.headers['stripe-signature'];
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        try {
          return await receivePaymentEvent(billing, body, Array.isArray(signature) ? signature[0] : signature);
        } catch (err) {
          // Not a domain error: the sender (the processor) gets 400 and nothing changed.
          if (err instanceof InvalidPaymentSignatureError) return reply.code(400).send({ code: 'bad_request', detail: err.message, request_id: request.id });
          throw err;
        }
      },
    });
  });
}
