import { percentile } from './stats.js';
import { termsOf } from './text.js';
import type { ReuseTier, TierThresholds } from './types.js';

/**
 * Reuse tiers from a policy per embedding model (docs/behavior.md "Reuse tiers").
 *
 * - `fixed`: the similarity (cosine) against two thresholds, as the spec describes.
 * - `calibrated`: for models whose similarities cannot tell a rewording from a lookalike (the
 *   bundled static model): `duplicate` only for the same task text (case, spacing and
 *   punctuation aside) or a cosine of at least 0.999, or when the LLM verification says so;
 *   `adapt` when the centred cosine reaches the project's own fitted threshold; else `fresh`.
 */
export type TierPolicyName = 'calibrated' | 'fixed';

/** The rule that decided a match's tier (explain's `tier_rule`). */
export type TierRule =
  | 'same_text' | 'cosine_0999' | 'llm_verified' | 'centered_adapt' | 'below_adapt'
  | 'fixed_duplicate' | 'fixed_adapt' | 'keyword_adapt'
  // (+) A duplicate lowered to adapt: its last outcome on this exact wording failed (docs/behavior.md "Outcome ranking").
  | 'failed_on_this_wording';

/** The policy and thresholds in force for one project (the response's `tier_policy`). */
export interface TierPolicyInForce {
  policy: TierPolicyName;
  /** null for calibrated: duplicate is decided by rules, not by a threshold. */
  duplicate_threshold: number | null;
  adapt_threshold: number;
  /** Where the adapt threshold comes from (e.g. `project_fit`, `small_project_fallback`, `env`, `model_config`). */
  source: string;
}

export interface TierDecision {
  tier: ReuseTier;
  rule: TierRule;
  threshold: number | null;
}

/** The cosine at which two texts count as the same task whatever their wording (calibrated). */
export const SAME_VECTOR_COSINE = 0.999;
/** Below this many patterns a project has no fit of its own: the fixed fallback applies. */
export const MIN_FIT_PATTERNS = 20;
/** The fitted adapt threshold lets through about this share of new, distinct tasks. */
export const FIT_PERCENTILE = 90;

/**
 * Task text for the same-text rule: lower-case, punctuation and runs of spacing as one space.
 * The words are core/text.ts termsOf's (lower-cased runs of Unicode letters and digits, an
 * ASCII text walked without the Unicode expression, which was most of this rule's cost on a
 * recall's page), joined by single spaces.
 */
export function normalisedTaskText(text: string): string {
  const words = termsOf(text).join(' ');
  // A task with no letters or digits (emoji only, say) is compared as written, spacing aside.
  return words.length > 0 ? words : text.trim().replace(/\s+/gu, ' ');
}

export function sameTaskText(a: string, b: string): boolean {
  return normalisedTaskText(a) === normalisedTaskText(b);
}

/**
 * The words two texts share come in the same order in both. A bag-of-words model (the bundled
 * static one) scores a reordering at cosine 1: "Convert HTML to Markdown" and "Convert
 * Markdown to HTML" are different tasks, so the cosine rule also asks for this.
 */
export function sharedWordsInOrder(a: string, b: string): boolean {
  const wa = normalisedTaskText(a).split(' ');
  const wb = normalisedTaskText(b).split(' ');
  const inB = new Set(wb);
  const inA = new Set(wa);
  const sa = wa.filter((w) => inB.has(w));
  const sb = wb.filter((w) => inA.has(w));
  return sa.length === sb.length && sa.every((w, i) => w === sb[i]);
}

export interface TierInputs {
  queryText: string;
  candidateText: string;
  /** Raw cosine (the wire's similarity). */
  cosine: number;
  /** Centred cosine (the raw cosine where centring does not apply). */
  centered: number;
}

/** The tier of one match under the policy in force. */
export function decideTier(policy: TierPolicyInForce, m: TierInputs): TierDecision {
  if (policy.policy === 'fixed') {
    const duplicate = policy.duplicate_threshold ?? 1;
    if (m.cosine >= duplicate) return { tier: 'duplicate', rule: 'fixed_duplicate', threshold: duplicate };
    if (m.cosine >= policy.adapt_threshold) return { tier: 'adapt', rule: 'fixed_adapt', threshold: policy.adapt_threshold };
    return { tier: 'fresh', rule: 'below_adapt', threshold: policy.adapt_threshold };
  }
  if (sameTaskText(m.queryText, m.candidateText)) return { tier: 'duplicate', rule: 'same_text', threshold: null };
  if (m.cosine >= SAME_VECTOR_COSINE && sharedWordsInOrder(m.queryText, m.candidateText)) {
    return { tier: 'duplicate', rule: 'cosine_0999', threshold: SAME_VECTOR_COSINE };
  }
  if (m.centered >= policy.adapt_threshold) return { tier: 'adapt', rule: 'centered_adapt', threshold: policy.adapt_threshold };
  return { tier: 'fresh', rule: 'below_adapt', threshold: policy.adapt_threshold };
}

/**
 * With no vector for the query (embedder down), similarity is token overlap: the same text is
 * still a duplicate; overlap at or above the adapt threshold is adapt.
 */
export function decideKeywordTier(policy: TierPolicyInForce, m: { queryText: string; candidateText: string; overlap: number }): TierDecision {
  if (policy.policy === 'fixed') return decideTier(policy, { ...m, cosine: m.overlap, centered: m.overlap });
  if (sameTaskText(m.queryText, m.candidateText)) return { tier: 'duplicate', rule: 'same_text', threshold: null };
  if (m.overlap >= policy.adapt_threshold) return { tier: 'adapt', rule: 'keyword_adapt', threshold: policy.adapt_threshold };
  return { tier: 'fresh', rule: 'below_adapt', threshold: policy.adapt_threshold };
}

/**
 * The LLM verdict combined with the similarity tier. It may lower any tier; under the
 * calibrated policy it may also raise `adapt` to `duplicate` (it read that match and judged
 * the code reusable as is), never a `fresh` match it was not shown.
 */
export function applyVerdict(policy: TierPolicyName, decision: TierDecision, verdict: ReuseTier): TierDecision {
  const rank: Record<ReuseTier, number> = { fresh: 0, adapt: 1, duplicate: 2 };
  if (policy === 'calibrated' && decision.tier === 'adapt' && verdict === 'duplicate') {
    return { tier: 'duplicate', rule: 'llm_verified', threshold: null };
  }
  if (rank[verdict] < rank[decision.tier]) return { tier: verdict, rule: 'llm_verified', threshold: decision.threshold };
  return decision;
}

/**
 * The project's adapt threshold from each sampled pattern's best centred score against the
 * other patterns: a pattern stands in for "a new task that is not stored yet", so the 90th
 * percentile of those bests is the score about 10% of new, distinct tasks would reach.
 */
export function fitAdaptThreshold(bestScores: readonly number[]): number | null {
  const finite = bestScores.filter((s) => Number.isFinite(s));
  if (finite.length < MIN_FIT_PATTERNS) return null;
  return Math.round(percentile(finite, FIT_PERCENTILE) * 1e4) / 1e4;
}

/** The fixed policy from thresholds. */
export function fixedPolicy(t: TierThresholds, source: string): TierPolicyInForce {
  return { policy: 'fixed', duplicate_threshold: t.duplicate, adapt_threshold: t.adapt, source };
}
