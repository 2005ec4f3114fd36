import { DEDUP_JACCARD_THRESHOLD, dedupeByTask } from '../core/dedup.js';
import { qualityFactor, QUALITY_WINDOW } from '../core/quality.js';
import { reuseTier } from '../core/similarity.js';
import { jaccardOfSets, tokenSet } from '../core/text.js';
import {
  patternKey, type Classification, type PatternFilter, type ReuseTier, type Scope, type ScoredPattern, type Source,
} from '../core/types.js';
import type { ServiceDeps } from './deps.js';

/** Recall input after contract parsing (defaults applied). */
export interface RecallInput {
  task: string;
  limit: number;
  offset: number;
  deduplicate: boolean;
  eval_weighted: boolean;
  classification?: Classification;
  source?: Source;
  min_score?: number;
}

export interface RecallMatch {
  similarity: number;
  reuse_tier: ReuseTier;
  pattern_key: string;
  score: number;
  pattern: { task: string; code: string; success_score: number; reuse_count: number };
}

export interface RecallResult {
  matches: RecallMatch[];
  has_more: boolean;
  next_offset: number | null;
}

/** 'keyword' when the embedder failed and matches were ranked by token overlap instead. */
export type RecallMode = 'semantic' | 'keyword';

export interface RecallOutcome {
  result: RecallResult;
  mode: RecallMode;
}

/** A reusable match nudges the pattern's success_score up by this much (capped at 10). */
const REUSE_BONUS = 0.1;
/** First search fetches this many times what the page needs; each widening multiplies it again. */
const OVERFETCH = 3;
const WIDEN = 4;
/**
 * A floor under the first fetch, so small pages still leave eval weighting and dedup room to
 * reorder and thin the candidates. Kept small: an HNSW walk in PostgreSQL costs more the
 * larger k is (the JSON scan costs the same for any k). Widening happens only when the page
 * is short after dedup (BEHAVIOR.md Recall 2).
 */
const MIN_FETCH = 20;

interface Ranked extends ScoredPattern {
  score: number;
}

/**
 * Recall (BEHAVIOR.md "Recall"). `readonly` (GET recall, or `readonly: true`) skips every
 * side effect: no reuse counting, no ROI event, no metrics.
 */
export async function recall(
  deps: ServiceDeps,
  scope: Scope,
  input: RecallInput,
  opts: { readonly: boolean },
): Promise<RecallOutcome> {
  const started = deps.clock.now();
  const filter = filterOf(input);
  let vector: Float32Array | null = null;
  try {
    [vector] = await deps.embedder.embed([input.task]);
  } catch (err) {
    // Only the embedder's failure degrades to keywords; storage errors below must surface.
    deps.logger.warn({ err }, 'embedder unavailable: recall falls back to keyword ranking');
  }
  const mode: RecallMode = vector ? 'semantic' : 'keyword';
  const ranked = vector
    ? await semanticRanking(deps, scope, vector, filter, input)
    : await keywordRanking(deps, scope, filter, input);

  const end = input.offset + input.limit;
  const page = ranked.slice(input.offset, end);
  const matches = page.map((r) => toMatch(r, deps));
  const has_more = ranked.length > end;
  const result: RecallResult = { matches, has_more, next_offset: has_more ? end : null };

  if (!opts.readonly) await recordSideEffects(deps, scope, matches, page, started);
  return { result, mode };
}

function filterOf(input: RecallInput): PatternFilter {
  const filter: PatternFilter = {};
  if (input.classification) filter.classification = input.classification;
  if (input.source) filter.source = input.source;
  if (input.min_score !== undefined) filter.min_score = input.min_score;
  return filter;
}

/** Over-fetch, rank, dedup; widen while the page is still short and the scope has more. */
async function semanticRanking(
  deps: ServiceDeps,
  scope: Scope,
  vector: Float32Array,
  filter: PatternFilter,
  input: RecallInput,
): Promise<Ranked[]> {
  const need = input.offset + input.limit;
  // No count() first: a search that returns fewer than k rows has seen the whole scope.
  let k = Math.max(MIN_FETCH, (need + 1) * OVERFETCH);
  for (;;) {
    const found = await deps.storage.patterns.search(scope, vector, k, filter);
    const ranked = await rankAndDedup(deps, scope, found, input);
    // need + 1 survivors also answer has_more.
    if (found.length < k || ranked.length > need) return ranked;
    k *= WIDEN;
  }
}

/** Every pattern of the scope ranked by token Jaccard with the query (no embedder needed). */
async function keywordRanking(deps: ServiceDeps, scope: Scope, filter: PatternFilter, input: RecallInput): Promise<Ranked[]> {
  const query = tokenSet(input.task);
  const scored: ScoredPattern[] = [];
  for await (const pattern of deps.storage.patterns.iterate(scope, filter)) {
    const similarity = jaccardOfSets(query, tokenSet(pattern.task));
    if (similarity > 0) scored.push({ pattern, similarity });
  }
  scored.sort((a, b) => b.similarity - a.similarity);
  return rankAndDedup(deps, scope, scored, input);
}

async function rankAndDedup(deps: ServiceDeps, scope: Scope, found: ScoredPattern[], input: RecallInput): Promise<Ranked[]> {
  let weights: Map<string, number[]> | null = null;
  if (input.eval_weighted && found.length > 0) {
    weights = await deps.storage.evals.recent(scope, found.map((f) => f.pattern.id), QUALITY_WINDOW);
  }
  const ranked: Ranked[] = found.map((f) => ({
    ...f,
    score: weights ? f.similarity * qualityFactor(weights.get(f.pattern.id) ?? []) : f.similarity,
  }));
  // Stable sort: equal scores keep the storage's similarity order.
  ranked.sort((a, b) => b.score - a.score);
  // Only the page plus one survivor (for has_more) is ever used, so dedup may stop there.
  const keep = input.offset + input.limit + 1;
  return input.deduplicate ? dedupeByTask(ranked, (r) => r.pattern.task, DEDUP_JACCARD_THRESHOLD, keep) : ranked;
}

function toMatch(r: Ranked, deps: ServiceDeps): RecallMatch {
  const { pattern } = r;
  return {
    similarity: r.similarity,
    reuse_tier: reuseTier(r.similarity, deps.config.tiers),
    pattern_key: patternKey(pattern.id),
    score: r.score,
    pattern: { task: pattern.task, code: pattern.code, success_score: pattern.success_score, reuse_count: pattern.reuse_count },
  };
}

async function recordSideEffects(
  deps: ServiceDeps,
  scope: Scope,
  matches: RecallMatch[],
  page: Ranked[],
  started: Date,
): Promise<void> {
  const { storage, clock, instruments } = deps;
  const reusedIds = page.filter((_, i) => matches[i].reuse_tier !== 'fresh').map((r) => r.pattern.id);
  const now = clock.now();
  if (reusedIds.length > 0) await storage.patterns.recordReuse(scope, reusedIds, REUSE_BONUS, now.toISOString());

  const best = matches.reduce<RecallMatch | null>((b, m) => (b === null || m.similarity > b.similarity ? m : b), null);
  const reused = best !== null && best.reuse_tier !== 'fresh';
  if (reused) instruments.recallHit();
  else instruments.recallMiss();
  await storage.metrics.recordRecall(scope, reused);
  await storage.analytics.append(scope, {
    at: now.toISOString(),
    kind: 'recall',
    best_similarity: best?.similarity ?? null,
    best_tier: best?.reuse_tier ?? null,
    matches: matches.length,
    latency_ms: now.getTime() - started.getTime(),
  });
}
