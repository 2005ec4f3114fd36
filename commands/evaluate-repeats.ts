import { ApiError, BudgetExceededError, type EvaluateRequest, type EvaluateResponse } from '../src/client/index.js';
import { roundUsd } from '../src/core/pricing.js';
import { passHatK, reduceRepeats, reducerName, type RepeatReducer } from '../src/core/repeats.js';
import type { CaseOutcome } from './evaluate-junit.js';

/**
 * `service evaluate` per case: `--repeat N` judgements (each its own judge-cache slot, docs/behavior.md
 * "Evaluation repeats"), reduced to one verdict, with the case's tokens, cost and cache hits;
 * and `--max-cost`, which stops the run before the budget would be passed (docs/behavior.md
 * "Evaluation cost"). evaluate.ts draws and reports; this file decides.
 */

export interface RepeatOptions {
  repeat: number;
  reducer: RepeatReducer;
  /** false with --no-cache. */
  cache: boolean;
  maxCost?: number;
}

/** The per-case figures a run reports (and the stored runs keep). */
export interface CaseFigures {
  repeats: number;
  /** Share of the repeats that passed their gates; null when the case was not judged. */
  pass_rate: number | null;
  flaky: boolean;
  tokens: { input: number; output: number };
  /** Null when the server's model has no price. */
  cost_usd: number | null;
  duration_ms: number;
  /** Every repeat was served from the judge cache. */
  cache_hit: boolean;
  cache_hits: number;
  cache_misses: number;
  /** Median score of each repeat, in order. */
  repeat_scores: number[];
}

export interface RepeatedOutcome extends CaseOutcome {
  figures: CaseFigures;
  /** Set when --max-cost stopped the run before this case was (fully) judged. */
  notEvaluated: string | null;
  cause?: unknown;
}

/** The --max-cost budget shared by the cases of one run (they run one at a time under it). */
export class CostBudget {
  private spent = 0;
  /** Why the run stopped, once it has. */
  stoppedBy: string | null = null;

  constructor(readonly limit: number) {}

  remaining(): number {
    return roundUsd(Math.max(0, this.limit - this.spent));
  }

  spend(usd: number | null): void {
    this.spent += usd ?? 0;
  }
}

const emptyFigures = (repeats: number): CaseFigures => ({
  repeats, pass_rate: null, flaky: false, tokens: { input: 0, output: 0 }, cost_usd: 0, duration_ms: 0,
  cache_hit: false, cache_hits: 0, cache_misses: 0, repeat_scores: [],
});

function errorOf(err: unknown): { kind: string; message: string } {
  const kind = err instanceof ApiError ? `http-${err.status}` : err instanceof Error ? err.name : 'error';
  const message = err instanceof ApiError ? err.detail : err instanceof Error ? err.message : String(err);
  return { kind, message };
}

/**
 * Judges one case `repeat` times (one after another: the budget and the cache slots are per
 * repeat) and reduces the repeats' gate outcomes. With a budget, each call may spend at most
 * what is left; a refusal stops the whole run and this case is reported as not evaluated.
 */
export async function evaluateRepeated(
  evaluateOne: (req: EvaluateRequest) => Promise<EvaluateResponse>,
  c: { name: string; request: EvaluateRequest },
  opts: RepeatOptions,
  gatesOf: (result: EvaluateResponse) => string[],
  budget: CostBudget | null,
): Promise<RepeatedOutcome> {
  const started = performance.now();
  const figures = emptyFigures(opts.repeat);
  const done = (outcome: Omit<RepeatedOutcome, 'name' | 'seconds' | 'figures'>): RepeatedOutcome => {
    figures.duration_ms = Math.round(performance.now() - started);
    return { name: c.name, seconds: (performance.now() - started) / 1000, figures, ...outcome };
  };
  if (budget?.stoppedBy) return done({ result: null, gateFailures: [], error: null, notEvaluated: budget.stoppedBy });

  const results: EvaluateResponse[] = [];
  let priced = true;
  for (let sample = 0; sample < opts.repeat; sample++) {
    const request: EvaluateRequest = {
      ...c.request,
      ...(opts.repeat > 1 ? { sample } : {}),
      ...(opts.cache ? {} : { no_cache: true }),
      ...(budget ? { max_cost_usd: budget.remaining() } : {}),
    };
    let result: EvaluateResponse;
    try {
      result = await evaluateOne(request);
    } catch (err) {
      if (budget && err instanceof BudgetExceededError) {
        budget.stoppedBy = `--max-cost $${budget.limit} would be passed: ${err.detail}`;
        return done({ result: results[0] ?? null, gateFailures: [], error: null, notEvaluated: budget.stoppedBy });
      }
      return done({ result: null, gateFailures: [], error: errorOf(err), notEvaluated: null, cause: err });
    }
    budget?.spend(result.cost_usd);
    results.push(result);
    figures.tokens.input += result.tokens.input;
    figures.tokens.output += result.tokens.output;
    if (result.cost_usd === null) priced = false;
    else figures.cost_usd = roundUsd((figures.cost_usd ?? 0) + result.cost_usd);
    if (result.cache_hit) figures.cache_hits++;
    else figures.cache_misses++;
    figures.repeat_scores.push(result.median_score);
  }
  if (!priced) figures.cost_usd = null;
  figures.cache_hit = figures.cache_hits === opts.repeat;

  const gates = results.map(gatesOf);
  const verdict = reduceRepeats(gates.map((g) => g.length === 0), opts.reducer);
  figures.pass_rate = verdict.pass_rate;
  figures.flaky = verdict.flaky;
  let gateFailures: string[] = [];
  if (!verdict.passed) {
    const reasons = [...new Set(gates.flat())];
    gateFailures = opts.repeat === 1 ? reasons : [`passed ${verdict.passes} of ${verdict.repeats} repeats (reducer ${reducerName(opts.reducer)})`, ...reasons];
  }
  return done({ result: results[0], gateFailures, error: null, notEvaluated: null });
}

/** The run's totals: pass^k over the judged cases (k = --repeat), flaky cases, tokens, cost and cache use. */
export function runFigures(outcomes: RepeatedOutcome[], opts: RepeatOptions) {
  const judged = outcomes.filter((o) => !o.error && o.notEvaluated === null && o.figures.pass_rate !== null);
  const unpriced = outcomes.some((o) => o.figures.cost_usd === null);
  return {
    repeats: opts.repeat,
    reducer: reducerName(opts.reducer),
    pass_hat_k: passHatK(judged.map((o) => ({ passes: Math.round(o.figures.pass_rate! * o.figures.repeats), repeats: o.figures.repeats })), opts.repeat),
    flaky: outcomes.filter((o) => o.figures.flaky).length,
    tokens: {
      input: outcomes.reduce((n, o) => n + o.figures.tokens.input, 0),
      output: outcomes.reduce((n, o) => n + o.figures.tokens.output, 0),
    },
    cost_usd: unpriced ? null : roundUsd(outcomes.reduce((n, o) => n + (o.figures.cost_usd ?? 0), 0)),
    cache_hits: outcomes.reduce((n, o) => n + o.figures.cache_hits, 0),
    cache_misses: outcomes.reduce((n, o) => n + o.figures.cache_misses, 0),
    not_evaluated: outcomes.filter((o) => o.notEvaluated !== null).map((o) => o.name),
  };
}
export type RunFigures = ReturnType<typeof runFigures>;
