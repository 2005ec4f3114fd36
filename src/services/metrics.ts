import type { MetricsResponse } from '../contracts/memory.js';
import type { Scope } from '../core/types.js';
import type { GaugeValues } from '../ports/metrics.js';
import type { ServiceDeps } from './deps.js';

/**
 * GET /v1/metrics for one scope (docs/behavior.md "Metrics"): success_rate is the share of runs
 * with eval_score ≥ 5.0 and avg_eval_score their mean (both null before the first run);
 * reuse_rate the share of POST recalls whose best match was duplicate or adapt (null before
 * the first recall).
 */
export async function getMetrics(deps: ServiceDeps, scope: Scope): Promise<MetricsResponse> {
  const counters = await deps.storage.metrics.get(scope);
  const pattern_count = await deps.storage.patterns.count(scope);
  return {
    runs: counters.runs,
    success_rate: counters.runs > 0 ? counters.successes / counters.runs : null,
    avg_eval_score: counters.runs > 0 ? counters.eval_sum / counters.runs : null,
    pattern_count,
    reuse_rate: counters.recalls > 0 ? counters.reusing_recalls / counters.recalls : null,
  };
}

/** The Prometheus gauges: the same numbers summed over every scope of the store. */
export async function processWideMetrics(deps: ServiceDeps): Promise<GaugeValues> {
  const scopes = await deps.storage.patterns.listScopes();
  // Runs can be counted in a scope whose patterns were all pruned; the default one is always read.
  if (!scopes.some((s) => s.tenant_id === 'default' && s.project_id === 'default')) {
    scopes.push({ tenant_id: 'default', project_id: 'default' });
  }
  let patterns = 0, runs = 0, successes = 0, evalSum = 0, recalls = 0, reusing = 0;
  for (const scope of scopes) {
    const c = await deps.storage.metrics.get(scope);
    patterns += await deps.storage.patterns.count(scope);
    runs += c.runs;
    successes += c.successes;
    evalSum += c.eval_sum;
    recalls += c.recalls;
    reusing += c.reusing_recalls;
  }
  return {
    pattern_count: patterns,
    avg_eval_score: runs > 0 ? evalSum / runs : 0,
    total_runs: runs,
    success_rate: runs > 0 ? successes / runs : 0,
    reuse_rate: recalls > 0 ? reusing / recalls : 0,
  };
}
