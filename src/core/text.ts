const WORD_RUNS = /[\p{L}\p{N}]+/gu;

/**
 * Token sets for the cheap lexical comparisons (near-identical learn, recall dedup,
 * feedback clustering, keyword fallback): lower-case, every non-letter/digit becomes a
 * separator. Unicode-aware so "café" and "naïve" stay whole words.
 */
export function tokenSet(text: string): Set<string> {
  // The runs of letters and digits, matched directly: no separator-replaced copy of the text
  // and no filtered array (dedup makes a token set per candidate of a recall).
  return new Set(text.toLowerCase().match(WORD_RUNS));
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
