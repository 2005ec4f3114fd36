import { quantisedFromBase64, quantisedToBase64 } from '../core/recall-trace.js';
import { idFromPatternKey, type Scope } from '../core/types.js';
import type { TracedOutcomesLine } from '../contracts/memory.js';
import type { TracedOutcomes } from '../ports/storage.js';
import type { ServiceDeps } from './deps.js';

/**
 * Outcomes in the NDJSON export and import (docs/behavior.md "Outcomes" 6): one line per recall
 * trace that has outcomes, after the pattern records; only the outcomes of exported patterns.
 */
export async function* outcomeLines(deps: ServiceDeps, scope: Scope, exportedIds: ReadonlySet<string>): AsyncGenerator<TracedOutcomesLine> {
  for await (const { trace, outcomes } of deps.storage.outcomes.iterate(scope)) {
    const kept = outcomes.filter((o) => exportedIds.has(idFromPatternKey(o.pattern_key) ?? ''));
    if (kept.length === 0) continue;
    yield {
      type: 'outcomes',
      tenant_id: scope.tenant_id,
      project_id: scope.project_id,
      trace: {
        recall_id: trace.recall_id,
        at: trace.at,
        query: trace.query,
        query_normalized: trace.query_normalized,
        query_vector: trace.query_vector ? { values: quantisedToBase64(trace.query_vector), scale: trace.query_vector.scale } : null,
        pattern_keys: trace.pattern_keys,
      },
      outcomes: kept.map((o) => ({ pattern_key: o.pattern_key, passed: o.passed, score: o.score, detail: o.detail, source: o.source, at: o.at })),
    };
  }
}

/** Restores exported traces with their outcomes (outcomes of patterns the scope does not hold are left out); answers how many traces. */
export async function restoreOutcomeLines(deps: ServiceDeps, scope: Scope, lines: TracedOutcomesLine[]): Promise<number> {
  let restored = 0;
  for (const line of lines) {
    const t = line.trace;
    const vector = t.query_vector ? quantisedFromBase64(t.query_vector.values, t.query_vector.scale) : null;
    const traced: TracedOutcomes = {
      trace: { recall_id: t.recall_id, at: t.at, query: t.query, query_normalized: t.query_normalized, query_vector: vector, pattern_keys: t.pattern_keys },
      outcomes: line.outcomes.map((o) => ({ recall_id: t.recall_id, pattern_key: o.pattern_key, passed: o.passed, score: o.score, detail: o.detail, source: o.source, at: o.at })),
    };
    await deps.storage.outcomes.restore(scope, traced);
    restored++;
  }
  return restored;
}
