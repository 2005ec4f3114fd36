import type { PatternRepository, Storage } from '../../../ports/storage.js';
import type { RecallBookkeeping } from './recall-queue.js';

/**
 * A POST recall: its page read now, its writes (reuse bumps, recall counter, ROI event, the
 * recall's trace: docs/behavior.md "Outcomes") queued for the next batch (docs/behavior.md
 * "Recall bookkeeping"). The answer waits for the read only, so the page shows the patterns as
 * they were before this recall's bump; the batch statement (recall-queue.ts) writes what many
 * recalls left behind at once.
 *
 * `getMany` is the repository's own read, which does not wait for the queue: a recall of
 * popular patterns would otherwise wait for every batch that bumps them.
 */
export function createRecallRecorder(getMany: PatternRepository['getMany'], queue: RecallBookkeeping): Storage['recordRecall'] {
  return async (scope, record) => {
    const page = await getMany(scope, record.page_ids);
    // Room in the queue is there at once unless the database is a whole batch behind.
    await queue.add({
      scope,
      counted: { reused_ids: record.reused_ids, bonus: record.bonus, at: record.at, reused: record.reused },
      event: record.event,
      trace: record.trace ?? null,
    });
    return page;
  };
}

/**
 * A read-only recall's ROI event and trace (docs/behavior.md "Recall" 8), through the same
 * queue; resolves once its batch is written, which the service does not wait for
 * (services/lookup-events.ts).
 */
export function createLookupRecorder(queue: RecallBookkeeping): Storage['recordLookup'] {
  return async (scope, record) => {
    const { written } = await queue.add({ scope, counted: null, event: record.event, trace: record.trace ?? null });
    await written;
  };
}
