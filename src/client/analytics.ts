import {
  EventsResponse, RollupResponse, type RollupRequest,
} from '../contracts/analytics.js';
import { RetentionApplyResponse, RetentionPolicyResponse } from '../contracts/governance.js';
import type { RollupWindow } from '../core/roi.js';
import type { ServiceClient } from './service-client.js';

/** GET /v1/analytics/events query: limit 1–1000 (server default 100), since as Unix seconds. */
export interface EventsListQuery {
  limit?: number;
  since?: number;
}

/** Typed calls of the analytics endpoints, on top of ServiceClient.request(). */
export class AnalyticsClient {
  constructor(private readonly client: ServiceClient) {}

  /** Computes (and stores) the rollup of the window ending now. */
  rollup(body: RollupRequest): Promise<RollupResponse> {
    return this.client.request('POST', '/v1/analytics/rollup', { body, schema: RollupResponse });
  }

  /** The last computed rollup of a window (ApiError 404 before the first compute). */
  getRollup(window: RollupWindow): Promise<RollupResponse> {
    return this.client.request('GET', `/v1/analytics/rollup/${encodeURIComponent(window)}`, { schema: RollupResponse });
  }

  events(query: EventsListQuery = {}): Promise<EventsResponse> {
    return this.client.request('GET', '/v1/analytics/events', { query: { ...query }, schema: EventsResponse });
  }
}

/** Typed calls of the governance retention endpoints. */
export class RetentionClient {
  constructor(private readonly client: ServiceClient) {}

  get(): Promise<RetentionPolicyResponse> {
    return this.client.request('GET', '/v1/governance/retention', { schema: RetentionPolicyResponse });
  }

  /** Sets the project's retention (DB auth mode only); null inherits the tenant's or the default. */
  set(retentionDays: number | null): Promise<RetentionPolicyResponse> {
    return this.client.request('PUT', '/v1/governance/retention', { body: { retention_days: retentionDays }, schema: RetentionPolicyResponse });
  }

  apply(dryRun = false): Promise<RetentionApplyResponse> {
    return this.client.request('POST', '/v1/governance/retention/apply', { body: { dry_run: dryRun }, schema: RetentionApplyResponse });
  }
}

export type { EventsResponse, RollupRequest, RollupResponse } from '../contracts/analytics.js';
export type { RetentionApplyResponse, RetentionPolicyResponse } from '../contracts/governance.js';
