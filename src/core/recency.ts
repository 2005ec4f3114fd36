/**
 * Recency weighting of recall (+): a pattern's ranking score is multiplied by
 * `factor ^ weight`, where `factor = 0.5 ^ (age / half-life)`. Age counts from the pattern's
 * last learn or update (`updated_at`); a time in the future counts as age 0. Weight 0 leaves
 * every score as it was; weight 1 halves a score per half-life of age.
 */
export interface RecencyOptions {
  /** 0 to 1; 0 turns recency off. */
  weight: number;
  /** > 0. */
  halfLifeDays: number;
  /** The moment ages are measured at (passed in: core reads no clock). */
  now: Date;
}

const SECONDS_PER_DAY = 86_400;

/** 0.5 ^ (age_seconds / (half_life_days × 86400)), in (0, 1]; an unreadable time counts as age 0. */
export function recencyFactor(updatedAt: string, now: Date, halfLifeDays: number): number {
  const ageSeconds = Math.max(0, (now.getTime() - Date.parse(updatedAt)) / 1000);
  if (!Number.isFinite(ageSeconds)) return 1;
  return 0.5 ** (ageSeconds / (halfLifeDays * SECONDS_PER_DAY));
}

/** `score × factor ^ weight` (the score unchanged when the weight is 0). */
export function recencyWeighted(score: number, updatedAt: string, opts: RecencyOptions): number {
  if (opts.weight <= 0) return score;
  return score * recencyFactor(updatedAt, opts.now, opts.halfLifeDays) ** opts.weight;
}
