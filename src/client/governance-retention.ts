import type { RetentionApplyResponse, RetentionPolicyResponse } from '../contracts/governance.js';
import { routes } from '../contracts/routes.js';
import type { ApiClient } from './api-client.js';

/**
 * The retention part of governance (docs/behavior.md "Governance"), reached as
 * `client.governance.retention`: the policy in effect, setting it, applying it.
 */
export class RetentionClient {
  constructor(private readonly client: ApiClient) {}

  get(): Promise<RetentionPolicyResponse> {
    return this.client.call(routes.getRetention);
  }

  /** Sets the project's retention (DB auth mode only); null inherits the tenant's or the default. */
  set(retentionDays: number | null): Promise<RetentionPolicyResponse> {
    return this.client.call(routes.setRetention, { body: { retention_days: retentionDays } });
  }

  /** Deletes the patterns past retention; with dryRun only counts them. */
  apply(dryRun = false): Promise<RetentionApplyResponse> {
    return this.client.call(routes.applyRetention, { body: { dry_run: dryRun } });
  }
}
