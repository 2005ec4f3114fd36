import type { LookupRecord, RecallRecord } from '../../../ports/storage.js';
import type { Scope } from '../../../core/types.js';
import { isPatternId } from './ids.js';
import type { JournalOp } from './journal-ops.js';
import { traceToLine } from './outcome-state.js';
import type { ScopeRegistry } from './scope-registry.js';

/**
 * A recall's bookkeeping as one journal line (docs/behavior.md "Recall" 7, "Outcomes"): the
 * reuse bumps, the recall counter, the ROI event and the trace are durable together, and share
 * the scope's group commit with every other write of the moment.
 */
export function createRecallRecorders(registry: ScopeRegistry) {
  return {
    async record(scope: Scope, r: RecallRecord): Promise<void> {
      const store = registry.forWrite(scope);
      const wanted = [...new Set(r.reused_ids)].filter(isPatternId);
      const event = { ...r.event };
      const trace = r.trace ? traceToLine(r.trace) : null;
      await store.mutate(() => {
        const ops: JournalOp[] = [];
        const present = wanted.filter((id) => store.state.patterns.has(id));
        if (present.length > 0) ops.push({ op: 'reuse', ids: present, d: r.bonus, at: r.at });
        ops.push({ op: 'recall', r: r.reused === true }, { op: 'roi', e: event });
        if (trace) ops.push({ op: 'trace', t: trace });
        return { op: { op: 'batch', ops } };
      });
    },
    async lookup(scope: Scope, r: LookupRecord): Promise<void> {
      const store = registry.forWrite(scope);
      const ops: JournalOp[] = [{ op: 'roi', e: { ...r.event } }];
      if (r.trace) ops.push({ op: 'trace', t: traceToLine(r.trace) });
      await store.mutate(() => ({ op: ops.length === 1 ? ops[0] : { op: 'batch', ops } }));
    },
  };
}
