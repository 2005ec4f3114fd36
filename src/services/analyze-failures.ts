import { clusterFailures } from '../core/failures.js';
import type { AnalyzeFailuresInput, AnalyzeFailuresResponse } from '../contracts/llm.js';
import type { Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';

/**
 * POST /v1/analyze-failures (docs/behavior.md "Analyze failures"; no LLM): feedback clusters
 * reported at least `min_count` times, grouped by meaning through the embedder, so issues
 * worded differently ("no input validation" / "inputs are never checked") become one failure
 * mode. The cosine threshold is configurable (SERVICE_FAILURE_CLUSTER_THRESHOLD) because each
 * embedding model spreads similarities differently.
 */
export async function analyzeFailures(deps: ServiceDeps, scope: Scope, input: AnalyzeFailuresInput): Promise<AnalyzeFailuresResponse> {
  const candidates = (await deps.storage.feedback.list(scope)).filter((c) => c.count >= input.min_count);
  if (candidates.length === 0) return { clusters: [] };
  const vectors = await deps.embedder.embed(candidates.map((c) => c.text));
  const items = candidates.map((c, i) => ({ text: c.text, count: c.count, score: c.score, vector: vectors[i] }));
  return { clusters: clusterFailures(items, deps.config.recall.failureClusterThreshold) };
}
