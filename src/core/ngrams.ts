/**
 * Character 3–5-grams as a side score of hybrid recall (docs/behavior.md "Recall" 3): the share
 * of n-grams query and task have in common, with no idf, so a misspelt or inflected word
 * ("resizing" / "resize", "octal" / "octl") still counts. Texts are lower-cased, runs of
 * anything but letters and digits become one space, and the text is padded with a space on
 * both sides, so word starts and ends are n-grams too. A sketch is the set of the n-grams'
 * 32-bit hashes (FNV-1a), sorted: comparing two is one merge.
 */
export const NGRAM_MIN = 3;
export const NGRAM_MAX = 5;
/** The side score's weight beside the blend (SERVICE_RECALL_NGRAM_WEIGHT's default: 0, off; see docs/recall.md). */
export const DEFAULT_NGRAM_WEIGHT = 0;

const SEPARATORS = /[^\p{L}\p{N}]+/gu;

/** The sorted, distinct hashes of the text's character 3–5-grams. */
export function ngramSketch(text: string): Uint32Array {
  const norm = ` ${text.toLowerCase().replace(SEPARATORS, ' ').trim()} `;
  const hashes: number[] = [];
  for (let i = 0; i < norm.length; i++) {
    let h = 0x811c9dc5;
    for (let n = 1; n <= NGRAM_MAX && i + n <= norm.length; n++) {
      h = Math.imul(h ^ norm.charCodeAt(i + n - 1), 0x01000193) >>> 0;
      if (n >= NGRAM_MIN) hashes.push(h ^ n);
    }
  }
  const sorted = Uint32Array.from(hashes).sort();
  let w = 0;
  for (let r = 0; r < sorted.length; r++) if (r === 0 || sorted[r] !== sorted[r - 1]) sorted[w++] = sorted[r];
  return sorted.slice(0, w);
}

/** Shared n-grams over √(|a| |b|) (the cosine of the two sets); 0 when either is empty. */
export function ngramSimilarity(a: Uint32Array, b: Uint32Array): number {
  if (a.length === 0 || b.length === 0) return 0;
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      shared++;
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return shared / Math.sqrt(a.length * b.length);
}
