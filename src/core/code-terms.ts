import { isKeywordTerm } from './bm25.js';
import { termsOf } from './text.js';

/**
 * The stored code as recall's second keyword field (docs/behavior.md "Recall" 2). A code's words
 * are its identifiers split where snake_case and camelCase split them (the tokenizer already
 * splits on `_`; a lower-case letter or digit followed by a capital, and a capital followed by a
 * capital and a lower-case letter, split here), lower-cased, with string literals and comments
 * read as words like everything else. Migration 0013's recall_code_terms is the same rule in SQL.
 *
 * The bag is capped: the first CODE_TERM_CAP terms of the code. Recall re-scores some 40
 * candidates per request, and walking whole files (3 kB each) cost 2.5 ms a recall; the start
 * of a snippet holds its function's name, parameters and first calls, which is what a task's
 * wording shares with it.
 */
export const CODE_TERM_CAP = 128;

const LOWER_THEN_UPPER = /([a-z0-9])([A-Z])/g;
const UPPER_THEN_WORD = /([A-Z])([A-Z][a-z])/g;

/** The code's keyword terms, repeats kept, at most CODE_TERM_CAP (the same as recall_code_terms). */
export function codeTermsOf(code: string): string[] {
  const split = code.replace(LOWER_THEN_UPPER, '$1 $2').replace(UPPER_THEN_WORD, '$1 $2');
  const out: string[] = [];
  for (const term of termsOf(split)) {
    if (!isKeywordTerm(term)) continue;
    out.push(term);
    if (out.length >= CODE_TERM_CAP) break;
  }
  return out;
}

/** The code's term bag as one text, terms separated by a space (what storages keep and recall walks). */
export function codeTermText(code: string): string {
  return codeTermsOf(code).join(' ');
}
