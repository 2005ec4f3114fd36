import type { ReuseTier } from './types.js';

/**
 * Verified reuse, the pure part: reading the LLM's verdicts and combining a verdict with the
 * similarity tier. A verdict can lower a tier, never raise it: the LLM may veto reuse that
 * similarity suggested, but it cannot invent closeness the embedding did not see.
 */
const TIER_RANK: Record<ReuseTier, number> = { fresh: 0, adapt: 1, duplicate: 2 };

export interface Verdict {
  verdict: ReuseTier;
  reason: string;
}

/** The lower of the similarity tier and the verdict. */
export function verifiedTier(similarityTier: ReuseTier, verdict: ReuseTier): ReuseTier {
  return TIER_RANK[similarityTier] <= TIER_RANK[verdict] ? similarityTier : verdict;
}

const REASON_CHARS = 500;

/**
 * `{verdicts: [{candidate, verdict, reason}]}` → candidate number (1-based) → verdict.
 * Entries out of range, repeated, or with a verdict other than the three tier names are
 * skipped; an empty map means nothing usable came back.
 */
export function parseVerdicts(value: unknown, count: number): Map<number, Verdict> {
  const out = new Map<number, Verdict>();
  const list = value && typeof value === 'object' ? (value as { verdicts?: unknown }).verdicts : undefined;
  if (!Array.isArray(list)) return out;
  for (const entry of list as unknown[]) {
    if (!entry || typeof entry !== 'object') continue;
    const { candidate, verdict, reason } = entry as Record<string, unknown>;
    const n = typeof candidate === 'string' ? Number(candidate) : candidate;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > count || out.has(n)) continue;
    if (verdict !== 'duplicate' && verdict !== 'adapt' && verdict !== 'fresh') continue;
    out.set(n, { verdict, reason: typeof reason === 'string' ? reason.slice(0, REASON_CHARS) : '' });
  }
  return out;
}
