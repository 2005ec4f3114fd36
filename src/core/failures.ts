import { cosine } from './similarity.js';
import { jaccardOfSets, tokenSet } from './text.js';

export interface FailureItem {
  text: string;
  count: number;
  score: number;
  vector: Float32Array;
}

export interface FailureCluster {
  representative: string;
  members: string[];
  total_count: number;
  avg_score: number;
}

/** Feedback clusters whose representatives' embeddings have cosine ≥ this are one failure mode. */
export const FAILURE_COSINE_THRESHOLD = 0.8;

/**
 * Group failure reports by meaning (docs/behavior.md "Analyze failures"): single link on cosine
 * (a chain of close pairs joins one cluster, so grouping never depends on input order).
 * Token Jaccard is the tie-breaker when choosing the representative: among the members
 * with the highest count, the one sharing the most words with the rest of its cluster
 * (the most typical wording) wins, then input order.
 * Members are listed representative first, then by count desc; avg_score is the plain
 * mean of member scores (each member is one issue, however often it was reported).
 * Clusters are sorted by total_count desc, then avg_score desc, then representative text.
 */
export function clusterFailures(items: FailureItem[], threshold = FAILURE_COSINE_THRESHOLD): FailureCluster[] {
  const parent = items.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  };
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      if (cosine(items[i].vector, items[j].vector) < threshold) continue;
      const ri = find(i);
      const rj = find(j);
      if (ri !== rj) parent[Math.max(ri, rj)] = Math.min(ri, rj);
    }
  }
  const groups = new Map<number, number[]>();
  items.forEach((_, i) => groups.set(find(i), [...(groups.get(find(i)) ?? []), i]));

  const tokens = items.map((item) => tokenSet(item.text));
  const clusters = [...groups.values()].map((indices) => {
    const typicality = (i: number): number =>
      indices.reduce((sum, j) => (j === i ? sum : sum + jaccardOfSets(tokens[i], tokens[j])), 0);
    const ordered = [...indices].sort(
      (a, b) => items[b].count - items[a].count || typicality(b) - typicality(a) || a - b,
    );
    return {
      representative: items[ordered[0]].text,
      members: ordered.map((i) => items[i].text),
      total_count: indices.reduce((sum, i) => sum + items[i].count, 0),
      avg_score: indices.reduce((sum, i) => sum + items[i].score, 0) / indices.length,
    };
  });
  return clusters.sort(
    (a, b) =>
      b.total_count - a.total_count ||
      b.avg_score - a.avg_score ||
      (a.representative < b.representative ? -1 : a.representative > b.representative ? 1 : 0),
  );
}
