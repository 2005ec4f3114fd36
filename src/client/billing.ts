import {
  BillingStatusResponse, CheckoutResponse, OverageResponse, PortalResponse,
  type CheckoutRequest, type OverageRequest,
} from '../contracts/billing.js';
import type { ServiceClient } from './service-client.js';

/** SPEC "Billing (hosted)": plan status, checkout, portal and overage settings. */
export class BillingClient {
  constructor(private readonly client: ServiceClient) {}

  status(): Promise<BillingStatusResponse> {
    return this.client.request('GET', '/v1/billing/status', { schema: BillingStatusResponse });
  }

  checkout(body: CheckoutRequest): Promise<CheckoutResponse> {
    return this.client.request('POST', '/v1/billing/checkout', { body, schema: CheckoutResponse });
  }

  portal(returnUrl: string): Promise<PortalResponse> {
    return this.client.request('GET', '/v1/billing/portal', { query: { return_url: returnUrl }, schema: PortalResponse });
  }

  setOverage(body: OverageRequest): Promise<OverageResponse> {
    return this.client.request('PATCH', '/v1/billing/overage', { body, schema: OverageResponse });
  }
}
