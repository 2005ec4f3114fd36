import { mean, percentile } from './stats.js';
import type { ReuseTier, RoiEvent } from './types.js';
import { ROLLUP_WINDOWS } from './vocabulary.js';

/**
 * ROI rollup math (pure): summaries of the ROI events of one time window. ROI events carry
 * metadata only (kind, stored, eval_score, best similarity/tier, latency), never task content.
 */

export { ROLLUP_WINDOWS };
export type RollupWindow = (typeof ROLLUP_WINDOWS)[number];

const HOUR_MS = 3_600_000;
export const WINDOW_MS: Readonly<Record<RollupWindow, number>> = {
  hourly: HOUR_MS,
  daily: 24 * HOUR_MS,
  weekly: 7 * 24 * HOUR_MS,
};

/** ROI events kept per scope (docs/behavior.md "Limits"): a rollup never needs to read more. */
export const ROI_EVENTS_PER_SCOPE = 10_000;

/** A run "succeeded" at this eval_score, the same line GET /v1/metrics draws (docs/behavior.md "Metrics"). */
export const SUCCESS_EVAL_SCORE = 5;

/**
 * Weights of the composite ROI score. Reuse is what the memory is for, so it weighs most;
 * learn quality and match closeness share the rest.
 */
export const ROI_WEIGHTS = { reuse: 0.4, learn_success: 0.3, similarity: 0.3 } as const;

export interface RecallSummary {
  /** Recalls in the window: lookups and recalls that counted reuse. */
  count: number;
  /** (+) Read-only recalls (GET, `readonly: true`: the CLI, the console, MCP), which count no reuse. */
  lookups: number;
  /** (+) Recalls that counted reuse (POST without `readonly`), events from before lookups were recorded included. */
  counted: number;
  /** Recalls whose best match was reusable (duplicate or adapt). */
  hits: number;
  /** hits / count; null without recalls. */
  hit_rate: number | null;
  /** Recalls by the tier of their best match; `none` = no match at all. */
  tiers: Record<ReuseTier | 'none', number>;
  /** Mean best similarity (a recall without matches counts as 0); null without recalls. */
  mean_best_similarity: number | null;
}

export interface LearnSummary {
  /** Learn calls in the window. */
  count: number;
  /** Learns that stored (or replaced) a pattern. */
  stored: number;
  /** Mean eval_score of the learns; null without learns. */
  avg_eval_score: number | null;
  /** Share of learns with eval_score ≥ 5; null without learns. */
  success_rate: number | null;
}

/** Latency in milliseconds over every event of the window that carries one. */
export interface LatencyPercentiles {
  /** Events with a latency_ms. */
  samples: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

/** Start of the window that ends at `now`. */
export function windowStart(window: RollupWindow, now: Date): Date {
  return new Date(now.getTime() - WINDOW_MS[window]);
}

export function summariseRecalls(events: readonly RoiEvent[]): RecallSummary {
  const recalls = events.filter((e) => e.kind === 'recall');
  const tiers: RecallSummary['tiers'] = { duplicate: 0, adapt: 0, fresh: 0, none: 0 };
  for (const e of recalls) tiers[e.best_tier ?? 'none'] += 1;
  const hits = tiers.duplicate + tiers.adapt;
  const lookups = recalls.filter((e) => e.readonly === true).length;
  return {
    count: recalls.length,
    lookups,
    counted: recalls.length - lookups,
    hits,
    hit_rate: recalls.length > 0 ? hits / recalls.length : null,
    tiers,
    mean_best_similarity: recalls.length > 0 ? mean(recalls.map((e) => clamp01(e.best_similarity ?? 0))) : null,
  };
}

export function summariseLearns(events: readonly RoiEvent[]): LearnSummary {
  const learns = events.filter((e) => e.kind === 'learn');
  const scores = learns.map((e) => e.eval_score).filter(isFiniteNumber);
  return {
    count: learns.length,
    stored: learns.filter((e) => e.stored === true).length,
    avg_eval_score: scores.length > 0 ? mean(scores) : null,
    success_rate: scores.length > 0 ? scores.filter((s) => s >= SUCCESS_EVAL_SCORE).length / scores.length : null,
  };
}

export function latencyPercentiles(events: readonly RoiEvent[]): LatencyPercentiles {
  const xs = events.map((e) => e.latency_ms).filter(isFiniteNumber).filter((ms) => ms >= 0);
  if (xs.length === 0) return { samples: 0, p50: null, p95: null, p99: null };
  return { samples: xs.length, p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99) };
}

/**
 * Composite ROI score in [0, 10]:
 *
 *   10 × (0.4 × hit_rate + 0.3 × learn success_rate + 0.3 × mean_best_similarity) / Σ weights used
 *
 * - hit_rate: share of recalls whose best match was reusable (duplicate or adapt);
 * - learn success_rate: share of learns with eval_score ≥ 5;
 * - mean_best_similarity: mean best similarity of the recalls (0 for a recall with no match).
 * A component without data (no recalls, or no learns) is left out and the remaining weights
 * are renormalised, so a window of only learns is scored on learn quality alone instead of
 * being punished for recalls that never happened. A window without events scores 0.
 */
export function roiScore(recall: RecallSummary, learn: LearnSummary): number {
  const parts: [weight: number, value: number | null][] = [
    [ROI_WEIGHTS.reuse, recall.hit_rate],
    [ROI_WEIGHTS.learn_success, learn.success_rate],
    [ROI_WEIGHTS.similarity, recall.mean_best_similarity],
  ];
  let weighted = 0;
  let weights = 0;
  for (const [weight, value] of parts) {
    if (value === null) continue;
    weighted += weight * clamp01(value);
    weights += weight;
  }
  if (weights === 0) return 0;
  return Math.min(10, Math.max(0, (10 * weighted) / weights));
}

/**
 * (+) How the ROI score was made, in words with the figures it used: the weighted parts with
 * their values, the parts left out for lack of data, and what the recall figures count.
 */
export function roiBasis(recall: RecallSummary, learn: LearnSummary): string {
  const parts: [weight: number, name: string, value: number | null][] = [
    [ROI_WEIGHTS.reuse, 'hit rate', recall.hit_rate],
    [ROI_WEIGHTS.learn_success, 'learn success rate', learn.success_rate],
    [ROI_WEIGHTS.similarity, 'mean best similarity', recall.mean_best_similarity],
  ];
  const used = parts.filter(([, , value]) => value !== null);
  if (used.length === 0) return 'no recall or learn in the window: the score is 0';
  const sum = used.reduce((s, [weight]) => s + weight, 0);
  const terms = used.map(([weight, name, value]) => `${weight} × ${name} ${fixed(clamp01(value as number))}`).join(' + ');
  const left = parts.filter(([, , value]) => value === null).map(([, name]) => name);
  const recalls = recall.count === 0 ? 'no recalls' :
    `${recall.count} recalls (${recall.lookups} read-only lookups, ${recall.counted} counting reuse), a hit being a best match at duplicate or adapt`;
  const learns = learn.count === 0 ? 'no learns' : `${learn.count} learns, a success being eval_score ≥ ${SUCCESS_EVAL_SCORE}`;
  return `10 × (${terms}) ÷ ${fixed(sum)}${left.length ? `; left out for lack of data: ${left.join(', ')}` : ''}; over ${recalls} and ${learns}`;
}

const fixed = (x: number) => (Math.round(x * 100) / 100).toFixed(2);

/**
 * The rollup of the window ending at `now` over `events` (any order). Events outside
 * [since, now] are ignored, so callers may pass a superset. Its shape is the rollup contract's
 * (RollupResponse, src/contracts/analytics.ts), which the service's return type checks; it is
 * not declared again here.
 */
export function computeRollup(window: RollupWindow, events: readonly RoiEvent[], now: Date) {
  const since = windowStart(window, now);
  const from = since.getTime();
  const to = now.getTime();
  const inWindow = events.filter((e) => {
    const at = Date.parse(e.at);
    return at >= from && at <= to;
  });
  const recall = summariseRecalls(inWindow);
  const learn = summariseLearns(inWindow);
  return {
    window,
    computed_at: now.toISOString(),
    since: since.toISOString(),
    roi_score: roiScore(recall, learn),
    roi_basis: roiBasis(recall, learn),
    event_count: inWindow.length,
    recall,
    learn,
    percentiles: latencyPercentiles(inWindow),
  };
}

function isFiniteNumber(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

function clamp01(x: number): number {
  if (!Number.isFinite(x)) return 0;
  return Math.min(1, Math.max(0, x));
}
