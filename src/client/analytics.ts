import type { EventsListQuery, EventsResponse, RollupRequest, RollupResponse } from '../contracts/analytics.js';
import { routes } from '../contracts/routes.js';
import type { RollupWindow } from '../core/roi.js';
import type { ApiClient } from './api-client.js';

/** Typed calls of the analytics endpoints (docs/behavior.md "Analytics"). */
export class AnalyticsClient {
  constructor(private readonly client: ApiClient) {}

  /** Computes (and stores) the rollup of the window ending now. */
  rollup(body: RollupRequest): Promise<RollupResponse> {
    return this.client.call(routes.computeRollup, { body });
  }

  /** The last computed rollup of a window (ApiError 404 before the first compute). */
  getRollup(window: RollupWindow): Promise<RollupResponse> {
    return this.client.call(routes.getRollup, { params: { window } });
  }

  /** Raw events: limit 1–1000 (server default 100), since as Unix seconds. */
  events(query: EventsListQuery = {}): Promise<EventsResponse> {
    return this.client.call(routes.events, { query });
  }
}
