import { redactKeywordSecrets, shannonEntropy } from './redaction-keywords.js';

/** The one placeholder that replaces redacted content. */
export const REDACTED = '[REDACTED]';

export const REDACTION_KINDS = [
  'private_key',
  'url_credential',
  'jwt',
  'llm_api_key',
  'service_token',
  'code_host_token',
  'cloud_access_key',
  'keyword_secret',
  'email',
  'ipv4',
  'hex_secret',
  'high_entropy_secret',
] as const;
export type RedactionKind = (typeof REDACTION_KINDS)[number];

export type RedactionCounts = Partial<Record<RedactionKind, number>>;

/** Characters that may continue a token: a match must not start or end inside a longer one. */
const TOKEN_CHAR = 'A-Za-z0-9_-';
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';

/**
 * Fixed-shape rules, in the order they run. Whole-token formats go first so no later rule
 * eats part of them: a hex run inside an sk- key, an "IP" inside a version, the
 * `token=` rule cutting a JWT at its first dot. The keyword rule runs after them (its
 * value may already be a placeholder, which it then leaves alone) and before the generic
 * email/IPv4/hex rules, so "password=abc@example.com" counts as one keyword secret.
 */
const TOKEN_RULES: readonly { kind: RedactionKind; pattern: RegExp }[] = [
  // Slack (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-), Stripe (sk_/rk_/pk_ live/test),
  // npm, PyPI and Hugging Face tokens.
  {
    kind: 'service_token',
    pattern: new RegExp(
      `(?<![${TOKEN_CHAR}])(?:xox[abeoprs]-[A-Za-z0-9-]{10,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|npm_[A-Za-z0-9]{36}|pypi-AgE[A-Za-z0-9_-]{50,}|hf_[A-Za-z0-9]{30,})(?![${TOKEN_CHAR}])`,
      'g',
    ),
  },
  // Three base64url parts, header starting eyJ ('{"'); an unsigned JWT has an empty signature.
  {
    kind: 'jwt',
    pattern: new RegExp(`(?<![${TOKEN_CHAR}])eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]{2,}\\.[A-Za-z0-9_-]*`, 'g'),
  },
  // sk-…, sk-proj-…, sk-ant-… (and other sk- providers); a digit is required so prose like
  // "sk-learn-compatible-estimators" survives. Google AI keys (AIza + 35) are the same kind.
  {
    kind: 'llm_api_key',
    pattern: new RegExp(
      `(?<![${TOKEN_CHAR}])(?:sk-(?=[A-Za-z0-9_-]*\\d)[A-Za-z0-9_-]{20,}|AIza[A-Za-z0-9_-]{35})(?![${TOKEN_CHAR}])`,
      'g',
    ),
  },
  {
    kind: 'code_host_token',
    pattern: new RegExp(
      `(?<![${TOKEN_CHAR}])(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|glpat-[A-Za-z0-9_-]{16,})(?![${TOKEN_CHAR}])`,
      'g',
    ),
  },
  { kind: 'cloud_access_key', pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g },
];

const GENERIC_RULES: readonly { kind: RedactionKind; pattern: RegExp }[] = [
  {
    kind: 'email',
    pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])/g,
  },
  // Each octet 0–255 without leading zeros, and not part of a longer dotted number
  // (1.2.3.4.5 is a version, not an address): no word char or dot before, no word char or
  // ".digit" after. A sentence-ending dot is fine.
  { kind: 'ipv4', pattern: new RegExp(`(?<![\\w.])(?:${OCTET}\\.){3}${OCTET}(?!\\w|\\.\\d)`, 'g') },
  // 32+ hex characters as a whole token (optional 0x): hashes, keys, session ids. Shorter
  // runs (31 and below) are ordinary ids and colours and stay.
  { kind: 'hex_secret', pattern: /(?<![A-Za-z0-9_])(?:0x)?[0-9a-fA-F]{32,}(?![A-Za-z0-9_])/g },
];

/**
 * A private-key block (PEM/OpenSSH/PGP): the body between its BEGIN and END lines goes, the
 * two lines stay so the text says what was there. A block cut before its END loses the
 * base64 run that follows BEGIN. The END line is found with indexOf, remembering where none
 * is left, so many BEGIN lines without an END cost linear time, not a scan each.
 */
const PRIVATE_KEY_BEGIN = /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----/g;
const CUT_KEY_BODY = /[A-Za-z0-9+/=\s\\:-]*/y;

function redactPrivateKeys(text: string, counts: RedactionCounts): string {
  const noEndAfter = new Map<string, number>();
  let out = '';
  let copied = 0;
  for (const m of text.matchAll(PRIVATE_KEY_BEGIN)) {
    if (m.index < copied) continue; // inside a block already replaced
    const bodyStart = m.index + m[0].length;
    const endLine = `-----END ${m[1]}PRIVATE KEY${m[2] ?? ''}-----`;
    const known = noEndAfter.get(endLine);
    const endAt = known !== undefined && bodyStart >= known ? -1 : text.indexOf(endLine, bodyStart);
    if (endAt < 0 && known === undefined) noEndAfter.set(endLine, bodyStart);
    let bodyEnd: number;
    if (endAt >= 0) {
      bodyEnd = endAt;
    } else {
      CUT_KEY_BODY.lastIndex = bodyStart;
      CUT_KEY_BODY.exec(text);
      bodyEnd = CUT_KEY_BODY.lastIndex;
    }
    const body = text.slice(bodyStart, bodyEnd).trim();
    if (body === '' || body === REDACTED) continue;
    counts.private_key = (counts.private_key ?? 0) + 1;
    out += `${text.slice(copied, bodyStart)}${REDACTED}${endAt >= 0 ? endLine : ''}`;
    copied = endAt >= 0 ? endAt + endLine.length : bodyEnd;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * The password of a URL (`postgres://user:pw@host`); the scheme, user and host stay. A
 * template in its place (`{password}`, `${PASS}`, `<password>`, `%(pw)s`) is code and stays.
 */
const URL_PASSWORD = /(\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/:@]*:)([^\s/@]+)(@[A-Za-z0-9[])/g;
const TEMPLATE_PASSWORD = /^(?:\{|\$|<|%\(|%s$)/;

/**
 * A long random token on its own (an AWS secret access key, a session secret): 32+ characters
 * of base64/base64url with upper case, lower case and at least 3 digits, ≥ 4.2 bits of entropy
 * per character, and no alphabet run (`ABCD`, `0123`) as in a charset literal. Paths and
 * dotted names are not tokens: `/` and `.` end one.
 */
const LONG_TOKEN = /(?<![A-Za-z0-9_+\-/.])[A-Za-z0-9_+-]{32,}={0,2}(?![A-Za-z0-9_+\-/.=])/g;

function isRandomToken(token: string): boolean {
  const body = token.replace(/=+$/, '');
  if (!/[a-z]/.test(body) || !/[A-Z]/.test(body) || (body.match(/\d/g)?.length ?? 0) < 3) return false;
  for (let i = 3; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (body.charCodeAt(i - 1) === c - 1 && body.charCodeAt(i - 2) === c - 2 && body.charCodeAt(i - 3) === c - 3) return false;
  }
  return shannonEntropy(body) >= 4.2;
}

function redactBlocks(text: string, counts: RedactionCounts): string {
  let out = redactPrivateKeys(text, counts);
  out = out.replace(URL_PASSWORD, (match: string, head: string, password: string, host: string) => {
    if (password === REDACTED || TEMPLATE_PASSWORD.test(password)) return match;
    counts.url_credential = (counts.url_credential ?? 0) + 1;
    return `${head}${REDACTED}${host}`;
  });
  return out;
}

function applyRule(text: string, kind: RedactionKind, pattern: RegExp, counts: RedactionCounts): string {
  return text.replace(pattern, () => {
    counts[kind] = (counts[kind] ?? 0) + 1;
    return REDACTED;
  });
}

/**
 * Replace PII and secrets with [REDACTED] (docs/behavior.md "Governance"). Returns the new text
 * and how many of each kind were replaced; the values themselves are never returned, so the
 * counts are safe to write to the audit log.
 */
export function redact(text: string): { text: string; counts: RedactionCounts } {
  const counts: RedactionCounts = {};
  let out = redactBlocks(text, counts);
  for (const rule of TOKEN_RULES) out = applyRule(out, rule.kind, rule.pattern, counts);
  const keyword = redactKeywordSecrets(out, REDACTED);
  out = keyword.text;
  if (keyword.count > 0) counts.keyword_secret = keyword.count;
  for (const rule of GENERIC_RULES) out = applyRule(out, rule.kind, rule.pattern, counts);
  out = out.replace(LONG_TOKEN, (token) => {
    if (!isRandomToken(token)) return token;
    counts.high_entropy_secret = (counts.high_entropy_secret ?? 0) + 1;
    return REDACTED;
  });
  return { text: out, counts };
}

/** Add b's counts into a (in place) and return a. */
export function mergeCounts(a: RedactionCounts, b: RedactionCounts): RedactionCounts {
  for (const kind of REDACTION_KINDS) {
    const n = b[kind];
    if (n) a[kind] = (a[kind] ?? 0) + n;
  }
  return a;
}

/**
 * Redact several fields at once (learn: task, code, output). null/undefined pass through
 * untouched; `redacted` is true when anything in any field was replaced.
 */
export function redactFields<K extends string>(
  fields: Record<K, string | null | undefined>,
): { fields: Record<K, string | null | undefined>; counts: RedactionCounts; redacted: boolean } {
  const out = { ...fields };
  const counts: RedactionCounts = {};
  for (const name of Object.keys(fields) as K[]) {
    const value = fields[name];
    if (typeof value !== 'string') continue;
    const result = redact(value);
    out[name] = result.text;
    mergeCounts(counts, result.counts);
  }
  return { fields: out, counts, redacted: Object.keys(counts).length > 0 };
}
