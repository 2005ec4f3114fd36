import { WEEK_MS } from './aging.js';
import { jaccardOfSets, tokenSet } from './text.js';
import type { FeedbackCluster } from './types.js';

/** A sentence joins a cluster whose representative has token Jaccard strictly above this. */
export const FEEDBACK_JOIN_JACCARD = 0.4;
export const NEW_CLUSTER_SCORE = 0.5;
export const RECURRENCE_BOOST = 0.1;
export const MAX_CLUSTER_SCORE = 1;
export const MAX_CLUSTER_TASKS = 5;
export const WEEKLY_FEEDBACK_DECAY = 0.9;
export const FEEDBACK_PRUNE_THRESHOLD = 0.15;
export const MAX_CLUSTERS_PER_SCOPE = 500;
/** A quality issue is "recurring" once it was reported at least this many times. */
export const MIN_RECURRING_COUNT = 2;

/**
 * Record one evaluator sentence. It joins the FIRST cluster (in the given order) whose
 * representative is lexically close, else starts a new cluster. Inputs are never mutated;
 * the result holds the one cluster that changed or was created (empty when the sentence
 * has no words, which carries no issue to track).
 */
export function addFeedbackSentence(
  clusters: FeedbackCluster[],
  sentence: string,
  task: string | null,
  now: string,
  newId: () => string,
): FeedbackCluster[] {
  const text = sentence.trim().replace(/\s+/g, ' ');
  const tokens = tokenSet(text);
  if (tokens.size === 0) return [];
  const match = clusters.find((c) => jaccardOfSets(tokenSet(c.text), tokens) > FEEDBACK_JOIN_JACCARD);
  if (match) {
    return [
      {
        ...match,
        count: match.count + 1,
        score: Math.min(MAX_CLUSTER_SCORE, match.score + RECURRENCE_BOOST),
        last_seen: now,
        tasks: rememberTask(match.tasks, task),
      },
    ];
  }
  return [
    {
      id: newId(),
      text,
      count: 1,
      score: NEW_CLUSTER_SCORE,
      last_seen: now,
      last_decayed_at: null,
      tasks: rememberTask([], task),
    },
  ];
}

/** Keep the 5 most recent distinct tasks: recent ones say best what the issue is about now. */
function rememberTask(tasks: readonly string[], task: string | null): string[] {
  const trimmed = task?.trim();
  if (!trimmed) return [...tasks];
  return [...tasks.filter((t) => t !== trimmed), trimmed].slice(-MAX_CLUSTER_TASKS);
}

/**
 * Feedback decay: score × 0.9^(weeks since last decayed; since last_seen when never decayed,
 * the closest thing to "when this score was set" a cluster records). Fractional weeks, like
 * pattern aging, so any schedule of decay runs compounds to the same result. Clusters
 * falling strictly below 0.15 are pruned; the others come back with last_decayed_at = now.
 */
export function decayClusters(clusters: FeedbackCluster[], now: Date): { updated: FeedbackCluster[]; prunedIds: string[] } {
  const nowIso = now.toISOString();
  const updated: FeedbackCluster[] = [];
  const prunedIds: string[] = [];
  for (const cluster of clusters) {
    const since = Date.parse(cluster.last_decayed_at ?? cluster.last_seen);
    if (Number.isNaN(since)) throw new RangeError(`feedback cluster ${cluster.id} has an invalid timestamp`);
    const weeks = Math.max(0, (now.getTime() - since) / WEEK_MS);
    const score = cluster.score * WEEKLY_FEEDBACK_DECAY ** weeks;
    if (score < FEEDBACK_PRUNE_THRESHOLD) prunedIds.push(cluster.id);
    else updated.push({ ...cluster, score, last_decayed_at: nowIso });
  }
  return { updated, prunedIds };
}

/** Most important first: score × count, then the most recently seen, then id for a stable order. */
function byImportance(a: FeedbackCluster, b: FeedbackCluster): number {
  return (
    b.score * b.count - a.score * a.count ||
    Date.parse(b.last_seen) - Date.parse(a.last_seen) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/**
 * Recurring issues (count ≥ 2) ordered by score × count. `taskType` keeps clusters whose
 * text or any remembered task contains it, ignoring case; blank means no filter.
 */
export function recurringIssues(clusters: FeedbackCluster[], opts: { taskType?: string } = {}): FeedbackCluster[] {
  const needle = opts.taskType?.trim().toLowerCase() ?? '';
  return clusters
    .filter((c) => c.count >= MIN_RECURRING_COUNT)
    .filter(
      (c) => needle === '' || c.text.toLowerCase().includes(needle) || c.tasks.some((t) => t.toLowerCase().includes(needle)),
    )
    .sort(byImportance);
}

/** Ids to evict so at most `max` clusters remain: least important (score × count) first. */
export function overflow(clusters: FeedbackCluster[], max = MAX_CLUSTERS_PER_SCOPE): string[] {
  if (clusters.length <= max) return [];
  return [...clusters]
    .sort(byImportance)
    .slice(Math.max(0, max))
    .map((c) => c.id);
}
