/**
 * Token sets for the cheap lexical comparisons (near-identical learn, recall dedup,
 * feedback clustering, keyword fallback): lower-case, every non-letter/digit becomes a
 * separator. Unicode-aware so "café" and "naïve" stay whole words.
 */
export function tokenSet(text: string): Set<string> {
  const tokens = text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').split(' ');
  return new Set(tokens.filter((t) => t.length > 0));
}

/** |A∩B| / |A∪B| of the token sets; 0 when either side has no tokens (nothing to compare). */
export function tokenJaccard(a: string, b: string): number {
  return jaccardOfSets(tokenSet(a), tokenSet(b));
}

/** Jaccard of two precomputed token sets (lets callers tokenize each text once). */
export function jaccardOfSets(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const t of small) if (large.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}
