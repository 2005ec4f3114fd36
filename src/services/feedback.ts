import { addFeedbackSentence, decayClusters, MAX_CLUSTERS_PER_SCOPE, overflow, recurringIssues } from '../core/feedback.js';
import type { FeedbackDecayResponse, FeedbackQueryInput, FeedbackResponse } from '../contracts/llm.js';
import type { FeedbackCluster, Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';
import { newId } from './ids.js';

/**
 * The feedback store (docs/behavior.md "Feedback store"): evaluator sentences grouped into
 * recurring quality issues, listed, decayed.
 */

/**
 * Read-modify-write of a scope's clusters is serialised per scope inside this process, so
 * concurrent evaluations never lose each other's sentences. (Several server processes on
 * one database can still interleave; a lost increment there only delays a count.)
 */
const scopeLocks = new Map<string, Promise<unknown>>();

async function withScopeLock<T>(scope: Scope, fn: () => Promise<T>): Promise<T> {
  const key = `${scope.tenant_id}\u0000${scope.project_id}`;
  const previous = scopeLocks.get(key) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const settled = run.catch(() => undefined);
  scopeLocks.set(key, settled);
  try {
    return await run;
  } finally {
    if (scopeLocks.get(key) === settled) scopeLocks.delete(key);
  }
}

/** Records distinct feedback sentences; keeps at most 500 clusters (least important evicted). */
export async function recordFeedback(deps: ServiceDeps, scope: Scope, sentences: string[], task: string | null): Promise<void> {
  if (sentences.length === 0) return;
  await withScopeLock(scope, async () => {
    const { storage, clock } = deps;
    const now = clock.now();
    const existing = await storage.feedback.list(scope);
    const stored = new Set(existing.map((c) => c.id));
    const working = new Map<string, FeedbackCluster>(existing.map((c) => [c.id, c]));
    const changed = new Set<string>();
    for (const sentence of sentences) {
      const touched = addFeedbackSentence([...working.values()], sentence, task, now.toISOString(), () => newId(now));
      for (const cluster of touched) {
        working.set(cluster.id, cluster);
        changed.add(cluster.id);
      }
    }
    const evicted = new Set(overflow([...working.values()], MAX_CLUSTERS_PER_SCOPE));
    const toWrite = [...changed].filter((id) => !evicted.has(id)).map((id) => working.get(id)!);
    if (toWrite.length > 0) await storage.feedback.upsert(scope, toWrite);
    // Only clusters that were stored before need deleting; new ones evicted at once were never written.
    const toRemove = [...evicted].filter((id) => stored.has(id));
    if (toRemove.length > 0) await storage.feedback.remove(scope, toRemove);
  });
}

/** GET /v1/feedback: recurring issues (count ≥ 2) by score × count, filtered and paged. */
export async function listFeedback(deps: ServiceDeps, scope: Scope, input: FeedbackQueryInput): Promise<FeedbackResponse> {
  const issues = recurringIssues(await deps.storage.feedback.list(scope), { taskType: input.task_type });
  const end = input.offset + input.limit;
  const has_more = issues.length > end;
  return {
    feedback: issues.slice(input.offset, end).map((c) => ({ text: c.text, count: c.count, score: c.score, last_seen: c.last_seen })),
    has_more,
    next_offset: has_more ? end : null,
  };
}

/** POST /v1/feedback/decay: ×0.9 per week since last decayed; below 0.15 pruned. */
export async function decayFeedback(deps: ServiceDeps, scope: Scope): Promise<FeedbackDecayResponse> {
  return withScopeLock(scope, async () => {
    const { updated, prunedIds } = decayClusters(await deps.storage.feedback.list(scope), deps.clock.now());
    if (updated.length > 0) await deps.storage.feedback.upsert(scope, updated);
    if (prunedIds.length > 0) await deps.storage.feedback.remove(scope, prunedIds);
    return { decayed: updated.length, pruned: prunedIds.length };
  });
}
