import { ConflictError, ValidationError } from '../../../core/errors.js';
import type { Storage } from '../../../ports/storage.js';
import { assertPatternId } from './ids.js';
import type { JournalOp } from './journal-ops.js';
import type { ScopeRegistry } from './scope-registry.js';
import { assertDimension } from './patterns-repo.js';
import { assertTenantRoom } from './tenant-quota.js';
import { assertVector, encodeVector, normalized } from './engine/index.js';

/**
 * A learn's writes as ONE journal line (a `batch` op): the pattern put, its eval observation,
 * the run counter and the ROI event are durable together or not at all. A crash cuts a torn
 * line off on replay, and a failed append reloads the scope from disk (scope-store.ts), so no
 * reader ever sees a pattern without its observation. Everything that could refuse the learn
 * is checked in `prepare`, before anything is applied: the tenant's pattern quota too, so
 * learns in the tenant's other projects cannot slip in between its count and the insert.
 */
export function createLearnRecorder(registry: ScopeRegistry): Storage['recordLearn'] {
  return async (scope, record) => {
    const write = record.pattern;
    const id = write.op === 'keep' ? write.id : write.pattern.id;
    assertPatternId(id);
    if (!Number.isFinite(record.eval_score)) throw new ValidationError('eval score must be a finite number');
    let unit: Float32Array | undefined;
    if (write.op === 'insert') {
      assertVector(write.vector);
      unit = normalized(write.vector);
    }
    const store = registry.forWrite(scope);
    await store.mutate(() => {
      const exists = store.state.patterns.has(id);
      const ops: JournalOp[] = [];
      if (write.op === 'insert') {
        if (exists) throw new ConflictError(`pattern ${id} already exists`);
        assertDimension(store, unit!);
        assertTenantRoom(registry, scope.tenant_id, record.tenant_quota, 1);
        ops.push({ op: 'put', p: { ...write.pattern }, v: encodeVector(unit!) });
      } else if (write.op === 'replace' && exists) {
        ops.push({ op: 'put', p: { ...write.pattern } });
      }
      // Observations belong to a pattern: one deleted meanwhile gets none (no orphans).
      if (write.op === 'insert' || exists) ops.push({ op: 'eval', id, s: record.eval_score, at: record.at });
      ops.push({ op: 'run', s: record.eval_score }, { op: 'roi', e: { ...record.event } });
      return { op: { op: 'batch', ops } };
    });
  };
}
