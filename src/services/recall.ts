import { unitVector } from '../core/hybrid.js';
import { QUALITY_WINDOW } from '../core/quality.js';
import { assertDedupPageWithinCap, firstFetch, widenedFetch } from '../core/dedup.js';
import type { RankedCandidate, RankOptions } from '../core/ranking.js';
import { jaccardOfSets, tokenSet } from '../core/text.js';
import { decideKeywordTier, decideTier, type TierDecision, type TierPolicyInForce } from '../core/tier-policy.js';
import { isMeaningfulVector } from '../core/vector.js';
import type { RecallExplain, RecallInput, RecallMatch, RecallResponse } from '../contracts/memory.js';
import {
  patternKey, type PatternFilter, type PatternRecord, type RecallCandidate, type ReuseTier, type RoiEvent, type Scope,
} from '../core/types.js';
import type { RecallRecord } from '../ports/storage.js';
import type { OutcomeAdjustment } from '../core/outcome-ranking.js';
import type { ServiceDeps } from './deps.js';
import { rankInSlices, recallBudget } from './recall-dedup.js';
import { hybridRanking } from './recall-hybrid.js';
import { tierPolicyFor } from './tier-policy.js';
import { assertCanVerify, reviewPage } from './verify-reuse.js';
import { recordLookup } from './lookup-events.js';
import { OutcomeStage } from './recall-outcomes.js';
import { newId } from './ids.js';
import { recallTrace } from '../core/recall-trace.js';
import { recallCredit } from '../core/outcome-credit.js';

/** A ranked candidate with whatever parts its ranking had (hybrid: the blend's; cosine: none). */
type Ranked = RankedCandidate & {
  cosine?: number; centered_cosine?: number; residual_cosine?: number; bm25?: number; code_bm25?: number; ngram?: number; blended?: number;
};

/** 'keyword' when the embedder failed and matches were ranked by token overlap instead. */
export type RecallMode = 'semantic' | 'keyword';

/** The response body and how it was ranked (the route reports a keyword fallback in a header). */
export interface RecallOutcome {
  result: RecallResponse;
  mode: RecallMode;
}

/**
 * Recall (docs/behavior.md "Recall"). Candidates are ranked on light rows (task, similarity, recent
 * evals); whole records, code included, are loaded for the returned page only. `readonly`
 * (GET recall, or `readonly: true`) counts no reuse and moves no metrics; it leaves only its ROI
 * event, marked `readonly: true`, so the activity figures show lookups as well as reuses.
 */
export async function recall(
  deps: ServiceDeps,
  scope: Scope,
  input: RecallInput,
  opts: { readonly: boolean },
): Promise<RecallOutcome> {
  const started = deps.clock.now();
  // A request that does not say whether to verify gets the server's default (SERVICE_RECALL_VERIFY).
  const verify = input.verify ?? deps.config.recall.verify.enabled;
  if (verify) assertCanVerify(deps, 'verify');
  // Before any work: a deduplicated page past the cap would cost seconds of CPU.
  assertDedupPageWithinCap(input);
  const filter = filterOf(input);
  let vector: Float32Array | null = null;
  try {
    [vector] = await deps.embedder.embed([input.task]);
    // A query the model reduces to nothing (zero or NaN vector) has no neighbours by meaning.
    if (vector && !isMeaningfulVector(vector)) vector = null;
  } catch (err) {
    // Only the embedder's failure degrades to keywords; storage errors below must surface.
    deps.logger.warn({ err }, 'embedder unavailable: recall falls back to keyword ranking');
  }
  const mode: RecallMode = vector ? 'semantic' : 'keyword';
  const ranking = rankOptions(input, started);
  // Reported outcomes adjust the ranking before dedup (docs/behavior.md "Outcome ranking").
  const outcomes = await OutcomeStage.open(deps, scope, input.task);
  const { ranked, docs } = await rankAll(deps, scope, vector, filter, input, ranking, outcomes);
  const policy = await tierPolicyFor(deps, scope, docs);

  const end = input.offset + input.limit;
  const page = ranked.slice(input.offset, end);
  const ids = page.map((c) => c.id);
  // A pattern whose last outcome on this exact wording failed is never `duplicate` for it.
  const capped = (c: RankedCandidate, d: TierDecision) => (outcomes ? outcomes.capTier(c.id, d) : d);
  const decisions = new Map(page.map((c) => [c.id, capped(c, decide(policy, input.task, c, mode))]));
  // Verdicts come before the bookkeeping: a match the LLM demotes to fresh is not a reuse.
  const review = verify ? await reviewPage(deps, scope, input.task, page, decisions, policy.policy) : null;
  const decisionOf = (c: RankedCandidate) => capped(c, review?.decisions.get(c.id) ?? decisions.get(c.id)!);
  const tierOf = (c: RankedCandidate) => decisionOf(c).tier;
  // Whole records for the page only; a POST recall reads them in the same step as it records
  // its side effects, so the page shows each pattern as it was before this recall's reuse bump.
  // The trace lets outcomes be reported against this recall (docs/behavior.md "Outcomes"); it
  // is written by the recall's own bookkeeping write, never a round trip of its own.
  const recallId = newId(started);
  const trace = recallTrace(recallId, started.toISOString(), input.task, vector, ids.map(patternKey));
  let records: PatternRecord[];
  if (opts.readonly) {
    records = await deps.storage.patterns.getMany(scope, ids);
    recordLookup(deps, scope, recallEvent(deps, page, started, tierOf, true), trace);
  } else {
    const record = recallRecord(deps, page, started, tierOf);
    if (record.reused) deps.instruments.recallHit();
    else deps.instruments.recallMiss();
    records = await deps.storage.recordRecall(scope, { page_ids: ids, ...record, trace });
  }
  const byId = new Map(records.map((r) => [r.id, r]));
  // A pattern deleted between the search and this read drops out rather than being shown half-known.
  const matches = page.flatMap((c) => {
    const record = byId.get(c.id);
    if (!record) return [];
    const match = toMatch(c, record, tierOf(c));
    if (review) match.verification = review.verifications.get(c.id) ?? null;
    const outcome = outcomes?.parts.get(c.id);
    if (input.explain) match.explain = explainOf(c, decisionOf(c), outcome);
    if (outcome && outcome.lessons.length > 0) match.lessons = outcome.lessons;
    return [match];
  });
  const has_more = ranked.length > end;
  const result: RecallResponse = { recall_id: recallId, matches, has_more, next_offset: has_more ? end : null };
  if (input.explain) result.tier_policy = policy;
  if (review && review.warnings.length > 0) result.warnings = review.warnings;
  return { result, mode };
}

function filterOf(input: RecallInput): PatternFilter {
  const filter: PatternFilter = {};
  if (input.classification) filter.classification = input.classification;
  if (input.source) filter.source = input.source;
  if (input.min_score !== undefined) filter.min_score = input.min_score;
  return filter;
}

function rankOptions(input: RecallInput, now: Date): RankOptions {
  // Only the page plus one survivor (for has_more) is ever used, so dedup may stop there.
  const opts: RankOptions = { evalWeighted: input.eval_weighted, deduplicate: input.deduplicate, keep: input.offset + input.limit + 1 };
  // Both fields have their defaults from the contract (weight 0: age plays no part).
  const weight = input.recency_weight;
  if (weight > 0) opts.recency = { weight, halfLifeDays: input.recency_half_life_days, now };
  return opts;
}

/**
 * Ranks the scope's candidates for the query: hybrid (default), cosine alone
 * (SERVICE_RECALL_RANKING=cosine), or, without a query vector, the keyword index alone; a
 * query with no terms at all (emoji only, say) and no vector is matched on its exact text.
 */
async function rankAll(
  deps: ServiceDeps,
  scope: Scope,
  vector: Float32Array | null,
  filter: PatternFilter,
  input: RecallInput,
  ranking: RankOptions,
  outcomes: OutcomeStage | null,
): Promise<{ ranked: Ranked[]; docs: number }> {
  const need = input.offset + input.limit;
  if (vector && deps.config.recall.ranking.mode === 'cosine') {
    return { ranked: await semanticRanking(deps, scope, vector, filter, input, ranking, outcomes), docs: await deps.storage.patterns.count(scope) };
  }
  if (!vector && tokenSet(input.task).size === 0) {
    return { ranked: await keywordRanking(deps, scope, filter, input, ranking, outcomes), docs: await deps.storage.patterns.count(scope) };
  }
  return hybridRanking(deps, scope, input.task, vector ? unitVector(vector) : null, filter, need, input.eval_weighted, ranking, outcomes);
}

/** The tier rule for one match: by similarity (semantic) or token overlap (keyword fallback). */
function decide(policy: TierPolicyInForce, task: string, c: Ranked, mode: RecallMode): TierDecision {
  if (mode === 'keyword') return decideKeywordTier(policy, { queryText: task, candidateText: c.task, overlap: c.similarity });
  const cosine = c.cosine ?? c.similarity;
  return decideTier(policy, { queryText: task, candidateText: c.task, cosine, centered: c.centered_cosine ?? cosine });
}

function explainOf(c: Ranked, d: TierDecision, outcome: OutcomeAdjustment | undefined): RecallExplain {
  const cosine = c.cosine ?? c.similarity;
  const explain: RecallExplain = {
    cosine,
    centered_cosine: c.centered_cosine ?? cosine,
    residual_cosine: c.residual_cosine ?? c.centered_cosine ?? cosine,
    bm25: c.bm25 ?? 0,
    code_bm25: c.code_bm25 ?? 0,
    ngram: c.ngram ?? 0,
    blended: c.base,
    eval_factor: c.eval_factor,
    recency_factor: c.recency_factor,
    score: c.score,
    tier_rule: d.rule,
    tier_threshold: d.threshold,
  };
  if (outcome) {
    const { adjustment, local, exact, exact_move, failures } = outcome;
    explain.outcome = { adjustment, local, exact, exact_move, failures };
  }
  return explain;
}

/** Over-fetch, rank, dedup; widen while the page is still short and the scope has more. */
async function semanticRanking(
  deps: ServiceDeps,
  scope: Scope,
  vector: Float32Array,
  filter: PatternFilter,
  input: RecallInput,
  ranking: RankOptions,
  outcomes: OutcomeStage | null,
): Promise<RankedCandidate[]> {
  const need = input.offset + input.limit;
  const evalWindow = input.eval_weighted ? QUALITY_WINDOW : 0;
  // No count() first: a search that returns fewer than k rows has seen the whole scope.
  const first = firstFetch(need);
  const budget = recallBudget();
  for (let k = first; ;) {
    const hits = await deps.storage.patterns.search(scope, vector, k, filter, evalWindow);
    const found: RecallCandidate[] = await budget.map(hits, ({ pattern, similarity, recent_evals }) => ({
      id: pattern.id, task: pattern.task, similarity, recent_evals, updated_at: pattern.updated_at,
    }));
    const outcome = outcomes ? await outcomes.adjust(found.map((c) => c.id), vector, null) : undefined;
    const ranked = await rankInSlices(found, outcome ? { ...ranking, outcome } : ranking, budget);
    // need + 1 survivors also answer has_more.
    const wider = found.length < k || ranked.length > need ? null : widenedFetch(k, first);
    if (wider === null) return ranked;
    k = wider;
  }
}

/** Every pattern of the scope ranked by token Jaccard with the query (no embedder needed). */
async function keywordRanking(
  deps: ServiceDeps,
  scope: Scope,
  filter: PatternFilter,
  input: RecallInput,
  ranking: RankOptions,
  outcomes: OutcomeStage | null,
): Promise<RankedCandidate[]> {
  const query = tokenSet(input.task);
  const exact = input.task.trim();
  const found: RecallCandidate[] = [];
  const budget = recallBudget();
  // A storage's iterate may answer from memory without ever waiting: the budget hands the loop back.
  for await (const pattern of deps.storage.patterns.iterate(scope, filter)) {
    // The same task is a perfect match even when it has no word tokens (emoji-only, say).
    const similarity = pattern.task.trim() === exact ? 1 : jaccardOfSets(query, tokenSet(pattern.task));
    if (similarity > 0) found.push({ id: pattern.id, task: pattern.task, similarity, recent_evals: [], updated_at: pattern.updated_at });
    if (budget.charge(2)) await budget.handBack();
  }
  if (input.eval_weighted && found.length > 0) {
    const recent = await deps.storage.evals.recent(scope, found.map((c) => c.id), QUALITY_WINDOW);
    await budget.forRanges(found.length, (from, to) => {
      for (let i = from; i < to; i++) found[i].recent_evals = recent.get(found[i].id) ?? [];
    });
  }
  const outcome = outcomes ? await outcomes.adjust(found.map((c) => c.id), null, null) : undefined;
  // Equal scores: the closer token overlap first, then the storage's order (ids: creation order).
  return rankInSlices(found, outcome ? { ...ranking, outcome } : ranking, budget, (a, b) => b.similarity - a.similarity);
}

function toMatch(candidate: RankedCandidate, record: PatternRecord, tier: ReuseTier): RecallMatch {
  return {
    similarity: candidate.similarity,
    reuse_tier: tier,
    pattern_key: patternKey(record.id),
    score: candidate.score,
    pattern: { task: record.task, code: record.code, success_score: record.success_score, reuse_count: record.reuse_count },
  };
}

/**
 * What a POST recall records (docs/behavior.md "Recall" 7): every duplicate or adapt match is a
 * reuse; the best match decides hit or miss and goes into the ROI event. Tiers come from the
 * similarities (lowered by verdicts when verified), so this is known before the records are read.
 */
function recallRecord(
  deps: ServiceDeps,
  page: RankedCandidate[],
  started: Date,
  tierOf: (c: RankedCandidate) => ReuseTier,
): Omit<RecallRecord, 'page_ids'> {
  const event = recallEvent(deps, page, started, tierOf, false);
  return {
    reused_ids: page.filter((c) => tierOf(c) !== 'fresh').map((c) => c.id),
    // A reusable match nudges the pattern's success_score up (capped at 10), unless the credit
    // waits for a reported outcome (docs/behavior.md "Outcomes").
    bonus: recallCredit(deps.config.outcomes.reuseCredit),
    at: event.at,
    reused: event.best_tier !== null && event.best_tier !== 'fresh',
    event,
  };
}

/**
 * The ROI event of a recall (metadata only): the best match's similarity and tier, the page
 * size, the latency, and whether the recall only looked (`readonly`) or counted reuse.
 */
function recallEvent(
  deps: ServiceDeps,
  page: RankedCandidate[],
  started: Date,
  tierOf: (c: RankedCandidate) => ReuseTier,
  readonly: boolean,
): RoiEvent & { best_tier: ReuseTier | null } {
  let best = -1;
  page.forEach((c, i) => {
    if (best < 0 || c.similarity > page[best].similarity) best = i;
  });
  const now = deps.clock.now();
  return {
    at: now.toISOString(),
    kind: 'recall',
    readonly,
    best_similarity: best < 0 ? null : page[best].similarity,
    best_tier: best < 0 ? null : tierOf(page[best]),
    matches: page.length,
    latency_ms: now.getTime() - started.getTime(),
  };
}
