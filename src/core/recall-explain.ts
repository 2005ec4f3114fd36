/** Text forms of recall's explain parts, shared by the CLI and the MCP tool (docs/behavior.md "Recall" 5). */
export interface ExplainParts {
  cosine: number;
  centered_cosine: number;
  bm25: number;
  blended: number;
  eval_factor: number;
  recency_factor: number;
  score: number;
  tier_rule: string;
  tier_threshold: number | null;
  /** (+) What reported outcomes did to the score (docs/behavior.md "Outcome ranking"). */
  outcome?: { adjustment: number; exact: 'failed' | 'passed' | null; failures: unknown[] };
}

export interface TierPolicyParts {
  policy: string;
  duplicate_threshold: number | null;
  adapt_threshold: number;
  source: string;
}

/** One line of a match's score parts (recall with explain). */
export function explainLine(e: ExplainParts): string {
  const threshold = e.tier_threshold === null ? '' : ` ${e.tier_threshold.toFixed(3)}`;
  return `cosine ${e.cosine.toFixed(3)} · centred ${e.centered_cosine.toFixed(3)} · bm25 ${e.bm25.toFixed(3)} · blended ${e.blended.toFixed(3)}` +
    ` · eval ×${e.eval_factor.toFixed(3)} · recency ×${e.recency_factor.toFixed(3)}${outcomePart(e.outcome)} · score ${e.score.toFixed(3)} · rule ${e.tier_rule}${threshold}`;
}

function outcomePart(o: ExplainParts['outcome']): string {
  if (!o) return '';
  const sign = o.adjustment >= 0 ? '+' : '−';
  const exact = o.exact ? `, ${o.exact} on this wording` : '';
  return ` · outcomes ${sign}${Math.abs(o.adjustment).toFixed(3)} (${o.failures.length} similar failure${o.failures.length === 1 ? '' : 's'}${exact})`;
}

/** The tier policy in force, in one line. */
export function tierPolicyLine(p: TierPolicyParts): string {
  const duplicate = p.duplicate_threshold === null ? 'duplicate by rule (same text, cosine ≥ 0.999 or LLM)' : `duplicate ≥ ${p.duplicate_threshold}`;
  return `${p.policy}: ${duplicate}, adapt ≥ ${p.adapt_threshold} (${p.source})`;
}


/** A lesson, in one line: the earlier query the pattern failed for and why (recall's `lessons`). */
export function lessonLine(l: { detail: string; query: string; similarity: number }): string {
  const one = (t: string, n: number) => {
    const flat = t.replace(/\s+/gu, ' ').trim();
    return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
  };
  return `failed for "${one(l.query, 80)}" (similarity ${l.similarity.toFixed(2)}): ${one(l.detail, 200)}`;
}
