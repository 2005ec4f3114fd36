import { redactKeywordSecrets } from './redaction-keywords.js';

/** The one placeholder that replaces redacted content. */
export const REDACTED = '[REDACTED]';

export const REDACTION_KINDS = [
  'jwt',
  'llm_api_key',
  'code_host_token',
  'cloud_access_key',
  'keyword_secret',
  'email',
  'ipv4',
  'hex_secret',
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
  let out = text;
  for (const rule of TOKEN_RULES) out = applyRule(out, rule.kind, rule.pattern, counts);
  const keyword = redactKeywordSecrets(out, REDACTED);
  out = keyword.text;
  if (keyword.count > 0) counts.keyword_secret = keyword.count;
  for (const rule of GENERIC_RULES) out = applyRule(out, rule.kind, rule.pattern, counts);
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
