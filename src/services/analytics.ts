import { NotFoundError } from '../core/errors.js';
import type { EventsInput, EventsResponse, RollupInput, RollupResponse } from '../contracts/analytics.js';
import { computeRollup, ROI_EVENTS_PER_SCOPE, windowStart, type RollupWindow } from '../core/roi.js';
import type { Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';
import { lookupsRecorded } from './lookup-events.js';

/** docs/behavior.md "Analytics": ROI rollups over the scope's ROI events, and the raw events. */

/**
 * Computes the rollup of the window ending now (deps.clock) and stores it as the scope's
 * latest rollup of that window. Plain function of (deps, scope, input) so the job runner can
 * run it asynchronously as well.
 */
export async function computeAnalyticsRollup(deps: ServiceDeps, scope: Scope, input: RollupInput): Promise<RollupResponse> {
  await lookupsRecorded(deps);
  const now = deps.clock.now();
  // Storage keeps at most ROI_EVENTS_PER_SCOPE events, so this one read sees the whole window.
  const events = await deps.storage.analytics.list(scope, {
    since: windowStart(input.window, now).toISOString(),
    limit: ROI_EVENTS_PER_SCOPE,
  });
  const rollup = computeRollup(input.window, events, now);
  await deps.storage.rollups.put(scope, rollup);
  return rollup;
}

/** The stored rollup of a window; 404 until one has been computed. */
export async function getAnalyticsRollup(deps: ServiceDeps, scope: Scope, window: RollupWindow): Promise<RollupResponse> {
  const rollup = await deps.storage.rollups.get(scope, window);
  if (rollup === null) {
    throw new NotFoundError(`no ${window} rollup has been computed for this project yet: POST /v1/analytics/rollup with {"window": "${window}"}`);
  }
  return rollup;
}

/** Raw ROI events (metadata only), newest first; `since` is a Unix time in seconds. */
export async function listAnalyticsEvents(
  deps: ServiceDeps,
  scope: Scope,
  input: EventsInput,
): Promise<EventsResponse> {
  const since = input.since === undefined ? undefined : new Date(input.since * 1000).toISOString();
  await lookupsRecorded(deps);
  const events = await deps.storage.analytics.list(scope, { since, limit: input.limit });
  // Adapters agree on "newest first" for events appended in time order; sorting by time (stable)
  // makes the answer well-defined for imported or backdated events too.
  events.sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
  return { events, count: events.length };
}
