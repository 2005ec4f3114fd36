import type { Scope } from '../../../core/types.js';
import type { AnalyticsRepository, GovernanceRepository, MetricsRepository, OutcomeRepository, PatternRepository } from '../../../ports/storage.js';
import type { RecallBookkeeping } from './recall-queue.js';

interface Repositories {
  patterns: PatternRepository;
  metrics: MetricsRepository;
  analytics: AnalyticsRepository;
  governance: GovernanceRepository;
  outcomes: OutcomeRepository;
}

/**
 * Read-your-writes within the process over the queued recall bookkeeping (docs/behavior.md
 * "Recall bookkeeping"): a read of what the bookkeeping changes waits for the scope's queued
 * records first, only when it has some (reads of records, reuse counts and metrics wait for
 * counting recalls, reads of ROI events and recall traces for any recall); a deletion waits for
 * all, so no batch writes into a scope after it is gone. An outcome reported right after its
 * recall's answer finds the recall's trace. Lookup events go through the queue too. Searches and
 * recall's own page read do not wait: their answers may lag the queue by one batch.
 */
export function withReadsAfterBookkeeping(queue: RecallBookkeeping, repos: Repositories): Repositories {
  const after = async (scope: Scope, which: 'all' | 'counted') => {
    if (queue.pendingIn(scope, which)) await queue.settle();
  };
  const { patterns, metrics, analytics, governance, outcomes } = repos;
  return {
    patterns: {
      ...patterns,
      async get(scope, id) {
        await after(scope, 'counted');
        return patterns.get(scope, id);
      },
      async getMany(scope, ids) {
        await after(scope, 'counted');
        return patterns.getMany(scope, ids);
      },
      async list(scope, page) {
        await after(scope, 'counted');
        return patterns.list(scope, page);
      },
      async *iterate(scope, filter) {
        await after(scope, 'counted');
        yield* patterns.iterate(scope, filter);
      },
    },
    metrics: {
      ...metrics,
      async get(scope) {
        await after(scope, 'counted');
        return metrics.get(scope);
      },
    },
    analytics: {
      ...analytics,
      async append(scope, event) {
        const { written } = await queue.add({ scope, counted: null, event, trace: null });
        await written;
      },
      async list(scope, opts) {
        await after(scope, 'all');
        return analytics.list(scope, opts);
      },
    },
    outcomes: {
      ...outcomes,
      async report(scope, report, opts) {
        await after(scope, 'all');
        return outcomes.report(scope, report, opts);
      },
      async getTrace(scope, recallId) {
        await after(scope, 'all');
        return outcomes.getTrace(scope, recallId);
      },
      async count(scope) {
        await after(scope, 'all');
        return outcomes.count(scope);
      },
      async purgeBefore(scope, before) {
        await after(scope, 'all');
        return outcomes.purgeBefore(scope, before);
      },
      async *iterate(scope) {
        await after(scope, 'all');
        yield* outcomes.iterate(scope);
      },
    },
    governance: {
      ...governance,
      async countScope(target, opts) {
        await queue.settle();
        return governance.countScope(target, opts);
      },
      async deleteScope(target, opts) {
        await queue.settle();
        return governance.deleteScope(target, opts);
      },
    },
  };
}
