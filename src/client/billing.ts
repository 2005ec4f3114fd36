import type {
  BillingStatusResponse, CheckoutRequest, CheckoutResponse, OverageRequest, OverageResponse, PortalResponse,
} from '../contracts/billing.js';
import type { ServiceClient } from './service-client.js';

// Contracts (and zod) load when a billing answer is first checked, not with the client:
// `service recall` imports the client and must stay free of zod (commands/registry.ts).
const contracts = () => import('../contracts/billing.js');

/** docs/behavior.md "Billing": plan status, checkout, portal and overage settings. */
export class BillingClient {
  constructor(private readonly client: ServiceClient) {}

  status(): Promise<BillingStatusResponse> {
    return this.client.request('GET', '/v1/billing/status', { schema: async () => (await contracts()).BillingStatusResponse });
  }

  checkout(body: CheckoutRequest): Promise<CheckoutResponse> {
    return this.client.request('POST', '/v1/billing/checkout', { body, schema: async () => (await contracts()).CheckoutResponse });
  }

  portal(returnUrl: string): Promise<PortalResponse> {
    return this.client.request('GET', '/v1/billing/portal', { query: { return_url: returnUrl }, schema: async () => (await contracts()).PortalResponse });
  }

  setOverage(body: OverageRequest): Promise<OverageResponse> {
    return this.client.request('PATCH', '/v1/billing/overage', { body, schema: async () => (await contracts()).OverageResponse });
  }
}
