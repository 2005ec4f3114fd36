/**
 * Keyword-prefixed secrets: the VALUE after password / token / secret / key (plus the
 * spellings passwd and apikey), with `=`, `:`, `:=` or `=>`, optional quotes around the
 * name and the value, any case: `password=hunter2`, `API_KEY: "abc"`, `"password": "x"`,
 * `--token=abc`, `config.db.password = 'x'`. The name and the quotes stay; only the value
 * goes, so the text still reads as what it was.
 *
 * Where a keyword counts (decided so that ordinary words stay intact):
 * - it must END the identifier (`key_id=…` is not a secret name);
 * - and START a segment of it: the whole name (`key=`), after `_`, `.` or `-`
 *   (`API_KEY`, `db.password`, `x-api-key`), or a camelCase hump (`apiKey`, `authToken`);
 * - or follow a word that makes a credential name (`secretkey`, `accesstoken`, `apikey`).
 * So `monkey=banana`, `turkey: sandwich` and `hockey=3` are left alone: "key" there is
 * just letters inside a word, not a name.
 *
 * Values that are clearly code rather than data are kept, so stored solutions still run:
 * a language word (`key=lambda …`, `token=None`), a function call (`key=itemgetter(1)`),
 * the same-named variable (`password=password`), or a reference through self/this/the
 * environment (`token=os.environ[…]`, `key: this.key`). Values starting with `[ { ( < =`
 * are expressions or placeholders (`key={item.id}`, `token=[REDACTED]`, `key == x`).
 * With `:` and an unquoted all-letters value, the pair is treated as prose ("The key: use
 * caching") unless it is a whole `name: value` line, as in YAML (`password: letmein`).
 * Quoted values are always secret: that is how credentials appear in code and JSON.
 */

const KEYWORDS = '(?:password|passwd|apikey|token|secret|key)';
/** Lower-case words that, glued before a keyword, still make a credential name. */
const CREDENTIAL_PREFIXES =
  /(?:api|access|auth|secret|private|public|client|session|refresh|bearer|signing|encryption|master|admin|root|user|db|app)$/;
const CODE_WORDS = new Set([
  'lambda', 'function', 'none', 'null', 'nil', 'undefined', 'true', 'false', 'self', 'this', 'new', 'await', 'async',
]);
const CODE_REFERENCE = /^(?:self|this|process\.env|os\.environ|os\.getenv|env)\b/;
const CALL = /^[A-Za-z_$][\w$.]*\(/;

const ASSIGNMENT = new RegExp(
  // prefix of the identifier | keyword | optional closing quote of a quoted name
  `(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]*?)(${KEYWORDS})(["']?)` +
    // separator
    `([ \\t]*(?::=|=>|[:=])[ \\t]*)` +
    // value: "…" | '…' | \`…\` | bare run (optionally after a stray quote)
    `(?:"((?:[^"\\\\\\n]|\\\\.)*)"|'((?:[^'\\\\\\n]|\\\\.)*)'|\`((?:[^\`\\\\]|\\\\.)*)\`|(["']?)(?![\\[{(<=])([^\\s'"\`,;&]+))`,
  'gi',
);

function keywordStartsSegment(prefix: string, keyword: string): boolean {
  if (prefix === '') return true;
  const before = prefix[prefix.length - 1];
  if ('_.-'.includes(before)) return true;
  if (/[A-Z]/.test(keyword[0]) && /[a-z0-9]/.test(before) && !/[A-Z]/.test(keyword.slice(1))) return true;
  return CREDENTIAL_PREFIXES.test(prefix.toLowerCase());
}

function isCodeValue(value: string, identifier: string): boolean {
  const word = value.replace(/[.,;:!?)\]}]+$/, '');
  return (
    CODE_WORDS.has(word.toLowerCase()) ||
    word.toLowerCase() === identifier.toLowerCase() ||
    CODE_REFERENCE.test(value) ||
    CALL.test(value)
  );
}

/** Longest line head (indent, bullet, `export `, quote) that still counts as "start of line". */
const MAX_LINE_HEAD = 40;

/**
 * True when the match is the whole line apart from surrounding whitespace / a list bullet /
 * `export` / trailing punctuation. Scans at most a few characters each way, so a long
 * single-line input with many matches stays linear.
 */
function isWholeLine(text: string, start: number, end: number): boolean {
  let lineStart = start;
  while (lineStart > 0 && text[lineStart - 1] !== '\n') {
    if (start - lineStart >= MAX_LINE_HEAD) return false;
    lineStart--;
  }
  if (!/^\s*(?:[-*]\s+)?(?:export\s+)?["']?$/.test(text.slice(lineStart, start))) return false;
  let i = end;
  while (i < text.length && text[i] !== '\n') {
    if (!' \t\r.,;!?'.includes(text[i])) return false;
    i++;
  }
  return true;
}

export function redactKeywordSecrets(text: string, placeholder: string): { text: string; count: number } {
  let count = 0;
  const out = text.replace(
    ASSIGNMENT,
    (match: string, prefix: string, keyword: string, nameQuote: string, separator: string,
      dq: string | undefined, sq: string | undefined, bq: string | undefined, bareQuote: string | undefined,
      bare: string | undefined, offset: number) => {
      if (!keywordStartsSegment(prefix, keyword)) return match;
      const head = prefix + keyword + nameQuote + separator;
      const quoted = dq ?? sq ?? bq;
      if (quoted !== undefined) {
        if (quoted === '' || quoted === placeholder) return match;
        const q = dq !== undefined ? '"' : sq !== undefined ? "'" : '`';
        count++;
        return `${head}${q}${placeholder}${q}`;
      }
      const value = bare ?? '';
      if (isCodeValue(value, prefix + keyword)) return match;
      // Keep sentence punctuation that follows the value: "password=hunter2." ends a sentence.
      const core = value.replace(/[.,;:!?)\]}]+$/, '');
      if (core === '') return match;
      const trailing = value.slice(core.length);
      if (separator.trim() === ':' && /^[A-Za-z]+$/.test(core) && !isWholeLine(text, offset, offset + match.length)) {
        return match;
      }
      count++;
      return `${head}${bareQuote ?? ''}${placeholder}${trailing}`;
    },
  );
  return { text: out, count };
}
