import { roundUsd } from './pricing.js';
import { reduceRepeats, reducerName, type RepeatReducer } from './repeats.js';
import type { CaseChangeName, RunStatusName } from './vocabulary.js';

/**
 * Evaluation runs (docs/behavior.md "Evaluation runs"): a case's gate, a run's summary and
 * status, and the case-by-case comparison with a baseline run. Pure: the service hands in
 * the stored cases.
 */

/**
 * The default noise margin of a comparison, in points of the 0-10 median. A median of three
 * evaluators whose scores spread as much as the high-variance threshold allows (population
 * variance 1.5, sd ≈ 1.22) has a standard error of about 1.25 · 1.22 / √3 ≈ 0.88; a drop
 * within that is the judges' noise, not a regression. Rounded up to one point.
 */
export const REGRESSION_DELTA = 1;

export interface GateSettings {
  min_score: number | null;
  fail_on_adversarial: boolean;
  fail_on_high_variance: boolean;
}

export interface GatedResult {
  median_score: number;
  variance: number;
  high_variance: boolean;
  adversarial_detected: boolean;
  failed_evaluators: number;
}

/** Why a scored case fails its gate (empty: it passes). Every evaluator must have answered. */
export function gateFailuresOf(result: GatedResult, gate: GateSettings, formatScore: (n: number) => string = String): string[] {
  const reasons: string[] = [];
  if (gate.min_score !== null && result.median_score < gate.min_score) {
    reasons.push(`median score ${formatScore(result.median_score)} is below --min-score ${gate.min_score}`);
  }
  if (gate.fail_on_adversarial && result.adversarial_detected) reasons.push('hard-coded or faked output detected');
  if (gate.fail_on_high_variance && result.high_variance) reasons.push(`evaluators disagree (variance ${formatScore(result.variance)} > 1.5)`);
  if (result.failed_evaluators > 0) reasons.push(`${result.failed_evaluators} evaluator(s) gave no result`);
  return reasons;
}

/** What a summary and a comparison read of a case. */
export interface SummarizedCase {
  case_id: string;
  name: string;
  median: number | null;
  passed: boolean;
  repeats: number;
  pass_rate: number | null;
  flaky: boolean | null;
  tokens: { input: number; output: number } | null;
  cost_usd: number | null;
  duration_ms: number | null;
  cache_hit: boolean | null;
  /** How many repeats came from the judge cache (absent: not counted). */
  cache_hits?: number | null;
}

export interface Summary {
  cases: number;
  passed: number;
  failed: number;
  pass_rate: number | null;
  pass_hat_k: number | null;
  flaky: number;
  cost_usd: number | null;
  tokens: { input: number; output: number } | null;
  cache_hits: number;
  cache_misses: number;
  duration_ms: number;
}

/** How many of a case's repeats were judged, and how many of those came from the judge cache. */
function cacheCounts(c: SummarizedCase): { hits: number; misses: number } {
  if (c.cache_hit === null) return { hits: 0, misses: 0 };
  // A case recorded without its per-repeat count counts once.
  if (c.cache_hits === undefined || c.cache_hits === null) return c.cache_hit ? { hits: 1, misses: 0 } : { hits: 0, misses: 1 };
  return { hits: c.cache_hits, misses: Math.max(0, c.repeats - c.cache_hits) };
}

/**
 * The run's summary from its cases, with the figures `service evaluate` reports of the same
 * cases (docs/behavior.md "Evaluation repeats"): cache hits and misses count repeats; cost is
 * null when nothing was judged or a judged case has no price; pass^k counts, among the judged
 * cases, those that passed every repeat, and is null when no case was repeated.
 */
export function summarize(cases: readonly SummarizedCase[], durationMs: number): Summary {
  const passed = cases.filter((c) => c.passed).length;
  const counted = cases.filter((c) => c.tokens !== null);
  const repeated = cases.some((c) => c.repeats > 1);
  // Judged: scored (a single repeat with a median) or reduced over its repeats (a pass rate).
  const judged = cases.filter((c) => c.pass_rate !== null || (c.repeats === 1 && c.median !== null));
  const cache = cases.map(cacheCounts);
  return {
    cases: cases.length,
    passed,
    failed: cases.length - passed,
    pass_rate: cases.length === 0 ? null : passed / cases.length,
    pass_hat_k: !repeated || judged.length === 0 ? null : judged.filter((c) => (c.pass_rate ?? (c.passed ? 1 : 0)) === 1).length / judged.length,
    flaky: cases.filter((c) => c.flaky === true).length,
    cost_usd: counted.length === 0 || counted.some((c) => c.cost_usd === null) ? null : roundUsd(counted.reduce((sum, c) => sum + c.cost_usd!, 0)),
    tokens: counted.length === 0 ? null : {
      input: counted.reduce((sum, c) => sum + c.tokens!.input, 0),
      output: counted.reduce((sum, c) => sum + c.tokens!.output, 0),
    },
    cache_hits: cache.reduce((n, c) => n + c.hits, 0),
    cache_misses: cache.reduce((n, c) => n + c.misses, 0),
    duration_ms: Math.max(0, durationMs),
  };
}

/** What merging a repeat reads and writes of a recorded case. */
export interface RepeatableCase extends SummarizedCase {
  gate_failures: string[];
  repeat_failures?: string[];
  failed_evaluators: number;
  error: string | null;
}

/** Passes so far: a single repeat passed when it met its gate; a reduced case keeps its pass rate. */
function passesOf(c: RepeatableCase): number {
  if (c.pass_rate !== null) return Math.round(c.pass_rate * c.repeats);
  return c.repeats === 1 && c.passed ? 1 : 0;
}

/**
 * A case with one more repeat (docs/behavior.md "Evaluation runs"): `next` is the new repeat
 * recorded on its own. The first repeat's scores and feedback stay (the median the CLI
 * reports); repeats, pass rate, flaky, tokens, cost, duration and cache use accumulate; the
 * verdict is the reducer's. A repeat that could not be evaluated fails the case with its error.
 */
export function mergeRepeat<C extends RepeatableCase>(previous: C, next: C, reducer: RepeatReducer): C {
  const repeats = previous.repeats + 1;
  const passes = passesOf(previous) + (next.passed ? 1 : 0);
  const outcomes = Array.from({ length: repeats }, (_, i) => i < passes);
  const verdict = reduceRepeats(outcomes, reducer);
  const error = previous.error ?? next.error;
  // The failing repeats' reasons so far: a single repeat's are its gate failures.
  const reasons = [...new Set([...(previous.repeat_failures ?? previous.gate_failures), ...next.gate_failures])];
  const passed = verdict.passed && error === null;
  const sum = <T>(a: T | null, b: T | null, add: (x: T, y: T) => T): T | null => (a === null ? b : b === null ? a : add(a, b));
  // Judged (it spent tokens, or none on a hit) without a price: the total is unknown, as the CLI reports it.
  const unpriced = (c: C) => c.tokens !== null && c.cost_usd === null;
  const hitsOf = (c: C) => c.cache_hits ?? (c.cache_hit === true ? c.repeats : 0);
  return {
    ...previous,
    repeats,
    pass_rate: error === null ? verdict.pass_rate : null,
    flaky: error === null ? verdict.flaky : null,
    passed,
    gate_failures: passed ? [] : verdict.passed ? reasons : [`passed ${verdict.passes} of ${repeats} repeats (reducer ${reducerName(reducer)})`, ...reasons],
    repeat_failures: reasons,
    tokens: sum(previous.tokens, next.tokens, (a, b) => ({ input: a.input + b.input, output: a.output + b.output })),
    cost_usd: unpriced(previous) || unpriced(next) ? null : sum(previous.cost_usd, next.cost_usd, (a, b) => roundUsd(a + b)),
    duration_ms: sum(previous.duration_ms, next.duration_ms, (a, b) => a + b),
    cache_hit: previous.cache_hit === null || next.cache_hit === null ? (previous.cache_hit ?? next.cache_hit) : previous.cache_hit && next.cache_hit,
    cache_hits: hitsOf(previous) + hitsOf(next),
    failed_evaluators: previous.failed_evaluators + next.failed_evaluators,
    error,
  };
}

export interface CaseDiff {
  case_id: string;
  name: string;
  change: CaseChangeName;
  baseline_median: number | null;
  median: number | null;
  delta: number | null;
  baseline_passed: boolean | null;
  passed: boolean | null;
  flaky: boolean | null;
}

export type ChangeCounts = Record<CaseChangeName, number>;

/**
 * How one case moved against the baseline's case of the same id. A pass turning into a
 * failure is a regression whatever the scores; otherwise only a median change of more than
 * `delta` counts (smaller moves are the judges' noise).
 */
export function caseChange(current: SummarizedCase, baseline: SummarizedCase, delta: number): CaseChangeName {
  if (baseline.passed && !current.passed) return 'regressed';
  if (!baseline.passed && current.passed) return 'improved';
  if (current.median === null || baseline.median === null) return 'unchanged';
  const moved = current.median - baseline.median;
  if (moved < -delta) return 'regressed';
  if (moved > delta) return 'improved';
  return 'unchanged';
}

const CHANGE_ORDER: Record<CaseChangeName, number> = { regressed: 0, missing: 1, new: 2, improved: 3, unchanged: 4 };

/** The comparison of a run with its baseline, regressions first (then missing, new, improved, unchanged). */
export function compareCases(current: readonly SummarizedCase[], baseline: readonly SummarizedCase[], delta: number): { cases: CaseDiff[]; counts: ChangeCounts } {
  const before = new Map(baseline.map((c) => [c.case_id, c]));
  const now = new Set(current.map((c) => c.case_id));
  const diffs: CaseDiff[] = [];
  for (const c of current) {
    const b = before.get(c.case_id);
    const change = b ? caseChange(c, b, delta) : 'new';
    diffs.push({
      case_id: c.case_id,
      name: c.name,
      change,
      baseline_median: b?.median ?? null,
      median: c.median,
      delta: b && b.median !== null && c.median !== null ? c.median - b.median : null,
      baseline_passed: b ? b.passed : null,
      passed: c.passed,
      flaky: c.flaky,
    });
  }
  for (const b of baseline) {
    if (now.has(b.case_id)) continue;
    diffs.push({
      case_id: b.case_id, name: b.name, change: 'missing', baseline_median: b.median, median: null, delta: null,
      baseline_passed: b.passed, passed: null, flaky: null,
    });
  }
  diffs.sort((a, b) => CHANGE_ORDER[a.change] - CHANGE_ORDER[b.change] || (a.case_id < b.case_id ? -1 : a.case_id > b.case_id ? 1 : 0));
  const counts: ChangeCounts = { improved: 0, regressed: 0, unchanged: 0, new: 0, missing: 0 };
  for (const d of diffs) counts[d.change]++;
  return { cases: diffs, counts };
}

/**
 * A finished run's status: failed when a case failed its gate or could not be evaluated, or a
 * baseline case is missing; regressed when the gate held but a case got worse than in the
 * baseline; passed otherwise. An empty run fails (it proves nothing).
 */
export function runStatus(summary: Pick<Summary, 'cases' | 'failed'>, counts: ChangeCounts | null, notEvaluated: number): Exclude<RunStatusName, 'running'> {
  if (summary.cases === 0 || summary.failed > 0 || notEvaluated > 0 || (counts !== null && counts.missing > 0)) return 'failed';
  if (counts !== null && counts.regressed > 0) return 'regressed';
  return 'passed';
}

/** A case's id when the caller gave none: its task (or, without one, "case"), made stable and short. */
export function defaultCaseId(task: string | null | undefined): string {
  const base = (task ?? '').trim().replace(/\s+/g, ' ');
  return base === '' ? 'case' : base.slice(0, 200);
}
