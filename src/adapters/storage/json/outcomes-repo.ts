import { ValidationError } from '../../../core/errors.js';
import { isRecallId, OUTCOME_EVIDENCE_PER_PATTERN } from '../../../core/recall-trace.js';
import type { OutcomeEvidence } from '../../../core/outcome-types.js';
import { idFromPatternKey } from '../../../core/types.js';
import type { OutcomeReportResult, OutcomeRepository } from '../../../ports/storage.js';
import { isPatternId } from './ids.js';
import type { JournalOp } from './journal-ops.js';
import { reportOf, traceToLine } from './outcome-state.js';
import type { ScopeRegistry } from './scope-registry.js';

/** Outcomes live in each scope's state and journal, next to the patterns they judge. */
export function createOutcomeRepository(registry: ScopeRegistry): OutcomeRepository {
  return {
    async report(scope, report, opts = {}) {
      if (!isRecallId(report.recall_id)) return 'unknown_recall';
      const store = registry.forRead(scope);
      if (!store) return 'unknown_recall';
      let result: OutcomeReportResult = 'unknown_recall';
      const copy = { ...report };
      // Decided against the state at append time, as every mutation of the scope.
      await store.mutate(() => {
        result = store.state.outcomes.check(copy, store.state.patternExists);
        if (result === 'replaced') return { op: { op: 'outcome', o: copy } };
        if (result !== 'stored') return null;
        const credit = opts.credit ?? 0;
        const id = idFromPatternKey(copy.pattern_key)!;
        // The report and its credit in one line: durable together or not at all.
        return credit === 0
          ? { op: { op: 'outcome', o: copy } }
          : { op: { op: 'batch', ops: [{ op: 'outcome', o: copy }, { op: 'credit', id, d: credit }] } };
      });
      return result;
    },
    async getTrace(scope, recallId) {
      if (!isRecallId(recallId)) return null;
      const t = registry.forRead(scope)?.state.outcomes.trace(recallId) ?? null;
      return t ? { ...t, pattern_keys: [...t.pattern_keys] } : null;
    },
    async evidenceFor(scope, patternIds, perPattern = OUTCOME_EVIDENCE_PER_PATTERN) {
      const out = new Map<string, readonly OutcomeEvidence[]>();
      const store = registry.forRead(scope);
      if (!store || !store.state.outcomes.hasAny()) return out;
      const n = Math.floor(perPattern);
      for (const id of patternIds) {
        const list = store.state.outcomes.newestFirst(id, n);
        if (list) out.set(id, list);
      }
      return out;
    },
    async hasAny(scope) {
      return registry.forRead(scope)?.state.outcomes.hasAny() ?? false;
    },
    async listForPattern(scope, patternId, page) {
      if (!isPatternId(patternId)) return [];
      return registry.forRead(scope)?.state.outcomes.evidence(patternId, Math.floor(page.limit)) ?? [];
    },
    async purgeBefore(scope, before) {
      const ms = Date.parse(before);
      if (Number.isNaN(ms)) throw new ValidationError('before must be an ISO-8601 time');
      const store = registry.forRead(scope);
      let counts = { traces: 0, outcomes: 0 };
      if (!store) return counts;
      await store.mutate(() => {
        counts = store.state.outcomes.countBefore(ms);
        return counts.traces + counts.outcomes === 0 ? null : { op: { op: 'opurge', before } };
      });
      return counts;
    },
    async *iterate(scope) {
      const store = registry.forRead(scope);
      if (!store) return;
      for (const item of store.state.outcomes.traced()) yield item;
    },
    async restore(scope, traced) {
      if (!isRecallId(traced.trace.recall_id)) throw new ValidationError('invalid recall id', [{ path: 'recall_id', message: 'must match [A-Za-z0-9_-]{1,64}' }]);
      const store = registry.forWrite(scope);
      const ops: JournalOp[] = [{ op: 'trace', t: traceToLine(traced.trace) }];
      for (const o of traced.outcomes) ops.push({ op: 'outcome', o: reportOf(o) });
      await store.mutate(() => ({ op: { op: 'batch', ops } }));
    },
    async count(scope) {
      return registry.forRead(scope)?.state.outcomes.counts ?? { traces: 0, outcomes: 0 };
    },
  };
}
