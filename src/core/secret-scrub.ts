/**
 * Provider error text can repeat the caller's own key ("Incorrect API key provided: sk-…"),
 * and that text flows into 503 details and log lines. scrubSecretText removes
 * the configured secrets themselves and anything shaped like a key before it goes anywhere.
 */

const PLACEHOLDER = '[REDACTED]';

/** Key shapes of the providers and tools we talk to, plus bearer credentials. */
const KEY_SHAPES: readonly RegExp[] = [
  /\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_*-]{8,}/g,
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g,
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bglpat-[A-Za-z0-9_-]{20,}\b/g,
  /\bsvc_[A-Za-z0-9_-]{20,}/g,
  /\b(?:rk|sk|pk|whsec)_(?:live|test)_[A-Za-z0-9]{8,}\b/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
];

/** Secrets shorter than this are not searched for: they would match ordinary words. */
const MIN_SECRET_LENGTH = 8;

export function scrubSecretText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= MIN_SECRET_LENGTH && out.includes(secret)) out = out.split(secret).join(PLACEHOLDER);
  }
  for (const shape of KEY_SHAPES) out = out.replace(shape, PLACEHOLDER);
  return out;
}
