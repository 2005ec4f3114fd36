/**
 * Repeated judging of one case (docs/behavior.md "Evaluation repeats"): LLM judges are noisy,
 * so a case may be judged N times; a reducer turns its N pass/fail outcomes into one verdict,
 * and the run reports pass^k.
 */

export type RepeatReducer =
  | { kind: 'all' }
  | { kind: 'majority' }
  | { kind: 'min-rate'; rate: number };

export const DEFAULT_REDUCER: RepeatReducer = { kind: 'all' };

/** `all`, `majority` or `min-rate:R` with 0 < R ≤ 1; null when the text is none of them. */
export function parseReducer(text: string): RepeatReducer | null {
  const t = text.trim();
  if (t === 'all') return { kind: 'all' };
  if (t === 'majority') return { kind: 'majority' };
  const m = /^min-rate:([0-9]*\.?[0-9]+)$/.exec(t);
  if (!m) return null;
  const rate = Number(m[1]);
  return rate > 0 && rate <= 1 ? { kind: 'min-rate', rate } : null;
}

export function reducerName(r: RepeatReducer): string {
  return r.kind === 'min-rate' ? `min-rate:${r.rate}` : r.kind;
}

export interface RepeatVerdict {
  repeats: number;
  passes: number;
  /** passes / repeats. */
  pass_rate: number;
  /** Some repeats passed and some did not (0 < passes < repeats). */
  flaky: boolean;
  /** The reducer's verdict. */
  passed: boolean;
}

export function reduceRepeats(outcomes: readonly boolean[], reducer: RepeatReducer): RepeatVerdict {
  const repeats = outcomes.length;
  if (repeats === 0) throw new RangeError('reduceRepeats needs at least one outcome');
  const passes = outcomes.filter(Boolean).length;
  const pass_rate = passes / repeats;
  const passed = reducer.kind === 'all' ? passes === repeats
    : reducer.kind === 'majority' ? passes * 2 > repeats
    : pass_rate >= reducer.rate;
  return { repeats, passes, pass_rate, flaky: passes > 0 && passes < repeats, passed };
}

function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let result = 1;
  for (let i = 1; i <= k; i++) result = (result * (n - k + i)) / i;
  return result;
}

/**
 * pass^k: the chance that k fresh repeats of a case all pass, averaged over the cases, estimated
 * without bias from each case's c passes of n repeats as C(c, k) / C(n, k) (k ≤ n). With k = n
 * it is the share of cases that passed every repeat. Null when there are no cases.
 */
export function passHatK(cases: readonly { passes: number; repeats: number }[], k: number): number | null {
  if (cases.length === 0) return null;
  let sum = 0;
  for (const c of cases) {
    if (k > c.repeats) throw new RangeError(`pass^${k} needs at least ${k} repeats per case`);
    sum += choose(c.passes, k) / choose(c.repeats, k);
  }
  return sum / cases.length;
}
