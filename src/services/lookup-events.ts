import type { RecallTrace } from '../core/outcome-types.js';
import type { RoiEvent, Scope } from '../core/types.js';
import type { AnalyticsRepository } from '../ports/storage.js';
import type { ServiceDeps } from './deps.js';

/** Lookup events still being appended, per analytics repository (one per open storage). */
const inFlight = new WeakMap<AnalyticsRepository, Set<Promise<void>>>();

/**
 * A read-only recall's one write, its ROI event (docs/behavior.md "Recall" 7) with its trace
 * (docs/behavior.md "Outcomes"), appended in one step (JSON: one journal line in the journal's
 * group commit; PostgreSQL: one statement) but
 * not waited for: the lookup answers at once, its cost off the request's path. A failed append
 * is logged, never the recall's error.
 */
export function recordLookup(deps: ServiceDeps, scope: Scope, event: RoiEvent, trace: RecallTrace | null = null): void {
  const repo = deps.storage.analytics;
  let pending = inFlight.get(repo);
  if (!pending) inFlight.set(repo, (pending = new Set()));
  const write = deps.storage.recordLookup(scope, { event, trace }).catch((err: unknown) => {
    deps.logger.warn({ err }, 'recording a read-only recall\'s ROI event failed; the recall was answered');
  });
  pending.add(write);
  void write.finally(() => pending.delete(write));
}

/**
 * Waits for the lookup events appended so far, so a read of the events or a rollup made after
 * a recall answered sees that recall (read-your-writes within the process).
 */
export async function lookupsRecorded(deps: ServiceDeps): Promise<void> {
  const pending = inFlight.get(deps.storage.analytics);
  if (pending && pending.size > 0) await Promise.all([...pending]);
}
