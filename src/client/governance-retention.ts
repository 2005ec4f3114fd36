import type { RetentionApplyResponse, RetentionPolicyResponse } from '../contracts/governance.js';
import type { ServiceClient } from './service-client.js';

// Contracts (and zod) load when a retention answer is first checked, not with the client:
// `service recall` imports the client and must stay free of zod (commands/registry.ts).
const contracts = () => import('../contracts/governance.js');

/**
 * The retention part of governance (docs/behavior.md "Governance"), reached as
 * `client.governance.retention`: the policy in effect, setting it, applying it.
 */
export class RetentionClient {
  constructor(private readonly client: ServiceClient) {}

  get(): Promise<RetentionPolicyResponse> {
    return this.client.request('GET', '/v1/governance/retention', { schema: async () => (await contracts()).RetentionPolicyResponse });
  }

  /** Sets the project's retention (DB auth mode only); null inherits the tenant's or the default. */
  set(retentionDays: number | null): Promise<RetentionPolicyResponse> {
    return this.client.request('PUT', '/v1/governance/retention', {
      body: { retention_days: retentionDays },
      schema: async () => (await contracts()).RetentionPolicyResponse,
    });
  }

  /** Deletes the patterns past retention; with dryRun only counts them. */
  apply(dryRun = false): Promise<RetentionApplyResponse> {
    return this.client.request('POST', '/v1/governance/retention/apply', {
      body: { dry_run: dryRun },
      schema: async () => (await contracts()).RetentionApplyResponse,
    });
  }
}

export type { RetentionApplyResponse, RetentionPolicyResponse } from '../contracts/governance.js';
