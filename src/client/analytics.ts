import type { EventsResponse, RollupRequest, RollupResponse } from '../contracts/analytics.js';
import type { RollupWindow } from '../core/roi.js';
import type { ServiceClient } from './service-client.js';

// Contracts (and zod) load when an analytics answer is first checked, not with the client:
// `service recall` imports the client and must stay free of zod (commands/registry.ts).
const contracts = () => import('../contracts/analytics.js');

/** GET /v1/analytics/events query: limit 1–1000 (server default 100), since as Unix seconds. */
export interface EventsListQuery {
  limit?: number;
  since?: number;
}

/** Typed calls of the analytics endpoints (docs/behavior.md "Analytics"). */
export class AnalyticsClient {
  constructor(private readonly client: ServiceClient) {}

  /** Computes (and stores) the rollup of the window ending now. */
  rollup(body: RollupRequest): Promise<RollupResponse> {
    return this.client.request('POST', '/v1/analytics/rollup', { body, schema: async () => (await contracts()).RollupResponse });
  }

  /** The last computed rollup of a window (ApiError 404 before the first compute). */
  getRollup(window: RollupWindow): Promise<RollupResponse> {
    return this.client.request('GET', `/v1/analytics/rollup/${encodeURIComponent(window)}`, {
      schema: async () => (await contracts()).RollupResponse,
    });
  }

  events(query: EventsListQuery = {}): Promise<EventsResponse> {
    return this.client.request('GET', '/v1/analytics/events', { query: { ...query }, schema: async () => (await contracts()).EventsResponse });
  }
}

export type { EventsResponse, RollupRequest, RollupResponse } from '../contracts/analytics.js';
export type { RollupWindow } from '../core/roi.js';
