/**
 * A key can never grant more than it has (docs/behavior.md "Keys"): a key made or rotated by a
 * key gets at most that key's expiry and pattern quota. null means no limit of that kind.
 */
export interface KeyLimits {
  /** ISO 8601 (UTC); null: never expires. */
  expires_at: string | null;
  /** The effective pattern quota; null: none. */
  max_patterns: number | null;
}

export type KeyLimitField = keyof KeyLimits;

/**
 * The limits of a key created by `creator` with the `requested` ones: what is left out is
 * inherited from the creator; what goes beyond it is named (the request is refused).
 */
export function limitsForNewKey(
  creator: KeyLimits,
  requested: { expires_at?: string; max_patterns?: number },
): { limits: KeyLimits } | { exceeds: KeyLimitField; message: string } {
  const expiresAt = requested.expires_at === undefined ? creator.expires_at : new Date(requested.expires_at).toISOString();
  if (creator.expires_at !== null && (expiresAt === null || Date.parse(expiresAt) > Date.parse(creator.expires_at))) {
    return { exceeds: 'expires_at', message: `must not be later than the creating key's expiry (${creator.expires_at})` };
  }
  const maxPatterns = requested.max_patterns ?? creator.max_patterns;
  if (creator.max_patterns !== null && (maxPatterns === null || maxPatterns > creator.max_patterns)) {
    return { exceeds: 'max_patterns', message: `must not exceed the creating key's max_patterns (${creator.max_patterns})` };
  }
  return { limits: { expires_at: expiresAt, max_patterns: maxPatterns } };
}

/**
 * A rotated key's limits: its own, tightened to the rotating key's, since only the rotating
 * caller learns the new secret. A key rotated by an unlimited key keeps its limits unchanged.
 */
export function limitsAfterRotation(key: KeyLimits, rotator: KeyLimits): KeyLimits {
  const earlier = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : Date.parse(a) <= Date.parse(b) ? a : b);
  const smaller = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
  return { expires_at: earlier(key.expires_at, rotator.expires_at), max_patterns: smaller(key.max_patterns, rotator.max_patterns) };
}
