import type {
  BillingStatusResponse, CheckoutRequest, CheckoutResponse, OverageRequest, OverageResponse, PortalResponse,
} from '../contracts/billing.js';
import { routes } from '../contracts/routes.js';
import type { ApiClient } from './api-client.js';

/** docs/behavior.md "Billing": plan status, checkout, portal and overage settings. */
export class BillingClient {
  constructor(private readonly client: ApiClient) {}

  status(): Promise<BillingStatusResponse> {
    return this.client.call(routes.billingStatus);
  }

  checkout(body: CheckoutRequest): Promise<CheckoutResponse> {
    return this.client.call(routes.checkout, { body });
  }

  portal(returnUrl: string): Promise<PortalResponse> {
    return this.client.call(routes.portal, { query: { return_url: returnUrl } });
  }

  setOverage(body: OverageRequest): Promise<OverageResponse> {
    return this.client.call(routes.setOverage, { body });
  }
}
