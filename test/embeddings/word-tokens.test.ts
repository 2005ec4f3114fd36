import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { WordTokenCache, wordByWordApplies } from '../../src/adapters/embeddings/word-tokens.js';
import { embeddingCorpus } from '../fixtures/embedding-corpus.js';
import { TEST_MODEL_PATH } from '../support/env.js';

/**
 * The static embedder tokenises printable ASCII word by word through a cache
 * (adapters/embeddings/word-tokens.ts). Its ids must be the whole text's, id for id and in
 * order, or the vectors would change: the embedder sums rows in id order.
 */
const tokenizerJson = JSON.parse(readFileSync(join(TEST_MODEL_PATH, 'tokenizer.json'), 'utf8')) as Record<string, unknown>;
const tokenizerConfig = JSON.parse(readFileSync(join(TEST_MODEL_PATH, 'tokenizer_config.json'), 'utf8')) as object;
const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
const encode = (text: string) => tokenizer.encode(text, { add_special_tokens: false }).ids;

/** Agent-task-like ASCII texts: the same words over and over, so the cache is hit and cleared. */
function asciiTasks(): string[] {
  const verbs = ['Parse', 'Resize', 'Stream', 'Deduplicate', 'Serialize', 'Re-index'];
  const things = ['CSV files', 'JSON payloads', 'user_records', 'S3 objects', 'log lines (gzip)', 'e-mail addresses'];
  const ways = ['in Python', 'with a shell script', 'in C#', 'using Node.js 20', 'with retries & backoff', 'for the v2 API.'];
  return verbs.flatMap((v) => things.flatMap((t) => ways.map((w) => `${v} ${t} ${w}`)));
}

describe('word-by-word token ids (bundled model)', () => {
  it('applies to the bundled WordPiece tokenizer, not to one that keeps spaces or splits otherwise', () => {
    expect(wordByWordApplies(tokenizerJson)).toBe(true);
    expect(wordByWordApplies({ ...tokenizerJson, pre_tokenizer: { type: 'Metaspace', replacement: '▁' } })).toBe(false);
    expect(wordByWordApplies({ ...tokenizerJson, normalizer: null })).toBe(false);
    expect(wordByWordApplies({ ...tokenizerJson, model: { type: 'BPE' } })).toBe(false);
    const spaced = [...(tokenizerJson.added_tokens as object[]), { id: 30522, content: 'two words', special: false }];
    expect(wordByWordApplies({ ...tokenizerJson, added_tokens: spaced })).toBe(false);
    const stripping = [...(tokenizerJson.added_tokens as object[]), { id: 30522, content: '<x>', lstrip: true }];
    expect(wordByWordApplies({ ...tokenizerJson, added_tokens: stripping })).toBe(false);
  });

  it('gives the whole text\'s ids for printable ASCII, and declines anything else', () => {
    const cache = new WordTokenCache(encode, 50);
    const texts = [
      ...embeddingCorpus(), ...asciiTasks(),
      '', ' ', '   leading and trailing   ', 'double  spaces  here', 'Hello [MASK] world[SEP]x [UNK]tail', '[CLS][PAD]',
      'punctuation!!! (a,b);c:d "quoted" \'single\' {x} [y] <z> ~`^|\\', `${'x'.repeat(101)} long word ${'ab'.repeat(60)}`,
      'word '.repeat(700), 'unaffable antidisestablishmentarianism 3.14159 1,000,000 C++ C# .NET node.js',
    ];
    let declined = 0;
    for (const max of [512, 7]) {
      for (const text of texts) {
        const ids = cache.ids(text, max);
        const printable = [...text].every((ch) => ch >= ' ' && ch <= '~');
        if (!printable) {
          expect(ids).toBeNull();
          declined++;
          continue;
        }
        expect(ids, text.slice(0, 80)).toEqual(encode(text).slice(0, max));
      }
    }
    // The corpus has accents, CJK, emoji and control characters: those are tokenised whole.
    expect(declined).toBeGreaterThan(20);
  });
});
