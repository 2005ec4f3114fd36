const WORD_RUNS = /[\p{L}\p{N}]+/gu;

/**
 * Token sets for the cheap lexical comparisons (near-identical learn, recall dedup,
 * feedback clustering, keyword fallback): lower-case, every non-letter/digit becomes a
 * separator. Unicode-aware so "café" and "naïve" stay whole words.
 */
export function tokenSet(text: string): Set<string> {
  // termsOf's ASCII walk gives the same tokens as the expression below (recall dedups some
  // dozen candidate tasks per request, and the Unicode expression was most of that).
  return new Set(termsOf(text));
}

/**
 * Every term of a text, repeats kept (term frequency counts them). Recall tokenizes every
 * candidate's task, so plain ASCII text (the usual case) takes a character loop; anything
 * else the Unicode-aware expression. Both give the same terms for ASCII.
 */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128) return unicodeTermsOf(text);
    if (isAsciiWordChar(c)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.push(text.slice(start, i).toLowerCase());
      start = -1;
    }
  }
  if (start >= 0) out.push(text.slice(start).toLowerCase());
  return out;
}

/** An ASCII letter or digit (a char code below 128): what the tokenizer keeps of plain ASCII text. */
export function isAsciiWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
}

function unicodeTermsOf(text: string): string[] {
  // The runs of letters and digits, matched directly: no separator-replaced copy, no filtered array.
  return text.toLowerCase().match(WORD_RUNS) ?? [];
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
