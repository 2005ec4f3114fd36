/**
 * Token ids of plain ASCII text, word by word through a cache. Recall embeds every query, and
 * the tokenizer (normalise, split, WordPiece) was about half of that: queries repeat their
 * words far more than their texts. Only for tokenizers where the ids of a text are the ids of
 * its space-separated words one after the other (wordByWordApplies), and only for text of
 * printable ASCII (0x20–0x7e): no control character, no other whitespace, nothing a
 * normaliser would rewrite across a space. Anything else is tokenised whole, as before.
 */

/** Words kept; past this the cache starts over (a bound on memory, not an LRU). */
const WORD_CAPACITY = 20_000;

interface TokenizerJson {
  normalizer?: { type?: unknown } | null;
  pre_tokenizer?: { type?: unknown } | null;
  model?: { type?: unknown } | null;
  added_tokens?: unknown;
}

interface AddedToken {
  content?: unknown;
  single_word?: unknown;
  lstrip?: unknown;
  rstrip?: unknown;
  normalized?: unknown;
}

/**
 * Whether splitting printable ASCII at spaces changes nothing: a BERT normaliser (on that
 * text only lower-cases, character by character), the BERT pre-tokenizer (splits at
 * whitespace, which it drops, and at punctuation), WordPiece (works within one pre-token),
 * and added tokens matched literally, none holding a space (so none spans two words).
 */
export function wordByWordApplies(tokenizerJson: object): boolean {
  const json = tokenizerJson as TokenizerJson;
  if (json.normalizer?.type !== 'BertNormalizer') return false;
  if (json.pre_tokenizer?.type !== 'BertPreTokenizer') return false;
  if (json.model?.type !== 'WordPiece') return false;
  const added = json.added_tokens ?? [];
  if (!Array.isArray(added)) return false;
  return (added as AddedToken[]).every(
    (t) => typeof t.content === 'string' && !/\s/.test(t.content) &&
      t.single_word !== true && t.lstrip !== true && t.rstrip !== true && t.normalized !== true,
  );
}

export class WordTokenCache {
  private readonly words = new Map<string, readonly number[]>();

  constructor(private readonly encode: (text: string) => number[], private readonly capacity = WORD_CAPACITY) {}

  /** The first `max` ids of `text`, or null when it is not printable ASCII (tokenise it whole). */
  ids(text: string, max: number): number[] | null {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c > 0x7e) return null;
    }
    const out: number[] = [];
    for (let start = 0; start < text.length && out.length < max;) {
      let end = text.indexOf(' ', start);
      if (end < 0) end = text.length;
      if (end > start) for (const id of this.wordIds(text.slice(start, end))) out.push(id);
      start = end + 1;
    }
    return out.length > max ? out.slice(0, max) : out;
  }

  private wordIds(word: string): readonly number[] {
    let ids = this.words.get(word);
    if (ids === undefined) {
      ids = this.encode(word);
      if (this.words.size >= this.capacity) this.words.clear();
      this.words.set(word, ids);
    }
    return ids;
  }
}
