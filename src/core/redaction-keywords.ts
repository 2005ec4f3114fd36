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
 * So `monkey=banana`, `turkey: sandwich` and `hockey=3` are left alone.
 *
 * Only secret VALUES are replaced, never identifiers or expressions: stored code must still
 * run. `key` and `token` alone (or as `sort_key`, `pad_token`) are ordinary programming
 * words, so after them only a value that looks like a credential by itself goes (see
 * `looksLikeCredential`); `password`, `secret` and credential names (`api_key`,
 * `authToken`, `client_secret`) take any literal. Bare (unquoted) values are identifiers in
 * code, so they go only where code does not put identifiers — a data line (`NAME=value`
 * alone on its line, a YAML `name: value` line, a `--flag=value`, a URL query
 * `?token=value`) — or when they do not look like an identifier (`hunter2` after a
 * credential name outside a call and a spaced `name = value` assignment, `p@ss!`, a long
 * random string). Always kept: a language word (`token=None`), a call (`key=itemgetter(1)`),
 * the same-named variable, a reference through self/this/the environment, and values
 * starting with `[ { ( < =` (`key={item.id}`, `token=[REDACTED]`, `key == x`).
 */

const KEYWORDS = '(?:password|passwd|apikey|token|secret|key)';
/** Keywords that name a credential whatever comes before them. */
const CREDENTIAL_KEYWORDS = new Set(['password', 'passwd', 'apikey', 'secret']);
/** Lower-case words that, before `key` / `token`, make a credential name. */
const CREDENTIAL_PREFIXES =
  /(?:api|access|auth|secret|private|client|session|refresh|bearer|signing|encryption|master|admin|root|user|db|app|oauth|github|gitlab|slack|npm|hf|pypi|stripe|bot|webhook|deploy|service)$/;
const CODE_WORDS = new Set([
  'lambda', 'function', 'none', 'null', 'nil', 'undefined', 'true', 'false', 'self', 'this', 'new', 'await', 'async',
  // type names, as in `token: str` or `key: string`
  'str', 'int', 'float', 'bool', 'bytes', 'string', 'number', 'boolean', 'any', 'unknown', 'object',
]);
const CODE_REFERENCE = /^(?:self|this|process\.env|os\.environ|os\.getenv|env)\b/;
/** A call, subscript or generic: `itemgetter(1)`, `row[0]`, `Optional[str]`, `Map<K, V>`. */
const EXPRESSION = /^[A-Za-z_$][\w$.]*[([<{]/;
/** An identifier or a dotted path of them: what code puts after `name=` as a variable. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;

const ASSIGNMENT = new RegExp(
  // prefix of the identifier | keyword | optional closing quote of a quoted name (and the
  // bracket of a subscript: `config['SECRET_KEY'] = …`)
  `(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]*?)(${KEYWORDS})(["']?\\]?)` +
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

/** `password`, `secret`, `api_key`, `authToken`: a name whose literal value is a credential. */
function namesCredential(prefix: string, keyword: string): boolean {
  if (CREDENTIAL_KEYWORDS.has(keyword.toLowerCase())) return true;
  return CREDENTIAL_PREFIXES.test(prefix.toLowerCase().replace(/[_.-]+$/, ''));
}

function isCodeValue(value: string, identifier: string): boolean {
  const word = value.replace(/[.,;:!?)\]}]+$/, '');
  return (
    CODE_WORDS.has(word.toLowerCase()) ||
    word.toLowerCase() === identifier.toLowerCase() ||
    CODE_REFERENCE.test(value) ||
    EXPRESSION.test(value)
  );
}

/** Bits per character of the string's own character distribution. */
export function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * A value that is a credential by its shape alone, whatever it is assigned to: no spaces, at
 * least 8 characters with letters and digits, and either long and varied (16+ characters
 * mixing upper case, lower case and digits with ≥ 3.5 bits of entropy per character) or,
 * when not identifier-shaped, simply mixed (`9f8e7d6c-…`, `abc123def`). Short words, names
 * (`user_id2`, `col_2020`) and sentences are not.
 */
export function looksLikeCredential(value: string): boolean {
  if (value.length < 8 || /\s/.test(value) || !/[A-Za-z]/.test(value) || !/\d/.test(value)) return false;
  if (value.length >= 16 && /[a-z]/.test(value) && /[A-Z]/.test(value) && shannonEntropy(value) >= 3.5) return true;
  return !/^[A-Za-z_$][\w$]*$/.test(value) && !/^[\d.:/-]+[A-Za-z]?$/.test(value) && shannonEntropy(value) >= 2.5;
}

/** Longest line head (indent, bullet, `export `, quote) that still counts as "start of line". */
const MAX_LINE_HEAD = 40;

/** The text between the start of the line and `start`, or null when longer than a line head. */
function lineHead(text: string, start: number): string | null {
  let lineStart = start;
  while (lineStart > 0 && text[lineStart - 1] !== '\n') {
    if (start - lineStart >= MAX_LINE_HEAD) return null;
    lineStart--;
  }
  return text.slice(lineStart, start);
}

/** Only `allowed` characters from `end` to the end of the line. */
function restOfLineIs(text: string, end: number, allowed: string): boolean {
  for (let i = end; i < text.length && text[i] !== '\n'; i++) {
    if (!allowed.includes(text[i])) return false;
  }
  return true;
}

type Place = 'data' | 'call' | 'code';

/**
 * Where a `name<sep>value` stands. `data`: a place that holds values, not code — a
 * command-line flag (`--token=…`), a URL query (`?token=…&`), an env/properties line
 * (`NAME=value` alone on an unindented line, `export` allowed; see envName) or a YAML line
 * (`  name: value`, `- name: value`). `call`: a keyword argument (`f(a, key=value)`).
 * `code`: anything else, prose included. `name` is the whole name (`--api-key`, `TOKEN`).
 */
function placeOf(text: string, start: number, end: number, name: string, credentialName: boolean, separator: string): Place {
  if (name.startsWith('-')) return 'data';
  if (start > 0 && '?&'.includes(text[start - 1])) return 'data';
  const sep = separator.trim();
  const head = lineHead(text, start);
  // `key=sum` alone on its line is as likely a Python statement as a config line: a plain
  // `key` / `token` makes an env line only in upper case (`TOKEN=abc`).
  const envName = credentialName || !/[a-z]/.test(name);
  if (sep === '=' && separator === '=' && envName && head !== null && /^(?:export\s+)?$/.test(head) && restOfLineIs(text, end, ' \t\r.')) {
    return 'data';
  }
  if (sep === ':' && head !== null && /^\s*(?:[-*]\s+)?["']?$/.test(head) && restOfLineIs(text, end, ' \t\r.!?')) {
    return 'data';
  }
  let i = start - 1;
  while (i >= 0 && ' \t\r\n'.includes(text[i])) i--;
  if (sep === '=' && i >= 0 && '(,'.includes(text[i])) return 'call';
  return 'code';
}

/** Whether a bare (unquoted) value goes. */
function bareValueIsSecret(value: string, place: Place, credentialName: boolean, separator: string): boolean {
  if (place === 'data') return true;
  if (IDENTIFIER.test(value)) {
    if (place === 'call') return false;
    // After `key` / `token` an identifier is a variable unless it is long random text.
    if (!credentialName) return value.length >= 24 && looksLikeCredential(value) && (value.match(/\d/g)?.length ?? 0) >= 3;
    // After a credential name, one with a digit in it (`hunter2`) is a password written
    // out, except in a spaced assignment (`password = pw2`), which is code.
    return /\d/.test(value) && !/^\s+=\s+$/.test(separator);
  }
  return credentialName || looksLikeCredential(value);
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
      const credentialName = namesCredential(prefix, keyword);
      const place = placeOf(text, offset, offset + match.length, prefix + keyword, credentialName, separator);
      const quoted = dq ?? sq ?? bq;
      if (quoted !== undefined) {
        if (quoted === '' || quoted === placeholder) return match;
        // A literal after `key` / `token` is often a dict key or a marker (`key="name"`,
        // `pad_token="<pad>"`): it goes only when it looks like a credential.
        if (!credentialName && place !== 'data' && !looksLikeCredential(quoted)) return match;
        const q = dq !== undefined ? '"' : sq !== undefined ? "'" : '`';
        count++;
        return `${head}${q}${placeholder}${q}`;
      }
      const value = bare ?? '';
      if (isCodeValue(value, prefix + keyword)) return match;
      // Keep sentence punctuation that follows the value: "password=hunter2." ends a sentence.
      const core = value.replace(/[.,;:!?)\]}]+$/, '');
      if (core === '' || core === placeholder) return match;
      const trailing = value.slice(core.length);
      // A stray opening quote (`password="unterminated`) makes it a literal.
      const literal = bareQuote !== undefined && bareQuote !== '';
      const secret = literal ? credentialName || place === 'data' || looksLikeCredential(core) : bareValueIsSecret(core, place, credentialName, separator);
      if (!secret) return match;
      count++;
      return `${head}${bareQuote ?? ''}${placeholder}${trailing}`;
    },
  );
  return { text: out, count };
}
