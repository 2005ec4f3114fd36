import type { FastifyInstance } from 'fastify';
import { BillingStatusResponse, CheckoutRequest, OverageRequest, PortalQuery } from '../../src/contracts/billing.js';
import { InvalidPaymentSignatureError } from '../../src/ports/payments.js';
import type { Billing } from '../../src/services/billing.js';
import { receivePaymentEvent } from '../../src/services/billing-events.js';
import { openPortal, setOverage, startCheckout } from '../../src/services/billing-manage.js';
import { authed } from '../context.js';
import { parseWith } from '../http.js';

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

  app.get('/v1/billing/status', { config: { permission: 'billing' } }, async (request) => {
    return BillingStatusResponse.parse(await billing.status(authed(request).scope));
  });

  app.post('/v1/billing/checkout', { config: { permission: 'billing:manage' } }, async (request) => {
    return startCheckout(billing, authed(request).scope, parseWith(CheckoutRequest, request.body));
  });

  app.get('/v1/billing/portal', { config: { permission: 'billing:manage' } }, async (request) => {
    const { return_url } = parseWith(PortalQuery, request.query, 'query');
    return openPortal(billing, authed(request).scope, return_url);
  });

  app.patch('/v1/billing/overage', { config: { permission: 'billing:manage' } }, async (request) => {
    return setOverage(billing, authed(request).scope, parseWith(OverageRequest, request.body));
  });

  // The signature covers the exact bytes sent, so this route reads its body raw (any media type).
  void app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    raw.post('/v1/billing/webhook', { config: { public: true, rateClass: 'exempt' } }, async (request, reply) => {
      const signature = request.headers['stripe-signature'];
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      try {
        return await receivePaymentEvent(billing, body, Array.isArray(signature) ? signature[0] : signature);
      } catch (err) {
        // Not a domain error: the sender (the processor) gets 400 and nothing changed.
        if (err instanceof InvalidPaymentSignatureError) return reply.code(400).send({ code: 'bad_request', detail: err.message, request_id: request.id });
        throw err;
      }
    });
  });
}
