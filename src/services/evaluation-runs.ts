import { createHash } from 'node:crypto';
import {
  RunId, type CompareResponse, type CreateRunInput, type EvaluationRun, type FinishRunInput, type FinishRunResponse,
  type RunCase, type RunDetailResponse, type RunGate, type RunJudge, type RunListInput, type RunListResponse,
} from '../contracts/evaluations.js';
import type { EvaluateInput, EvaluateResponse } from '../contracts/llm.js';
import {
  compareCases, defaultCaseId, gateFailuresOf, mergeRepeat, REGRESSION_DELTA, runStatus, summarize,
} from '../core/evaluation-runs.js';
import { DEFAULT_REDUCER, parseReducer, reducerName } from '../core/repeats.js';
import { ConflictError, NotFoundError, ValidationError } from '../core/errors.js';
import type { Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';
import { newId } from './ids.js';

/**
 * Evaluation runs (docs/behavior.md "Evaluation runs"): every evaluation is recorded as a case
 * of a run. A client groups cases by creating a run, evaluating with its run_id and finishing
 * it (summary, comparison with a baseline, status, optional blessing); an evaluation without a
 * run_id is a run of one case, finished at once.
 */

/** The judge settings evaluate.ts runs with, as a run records them. */
export interface JudgeSettings {
  prompt_version: string;
  temperature: number;
}

const NO_GATE: RunGate = { min_score: null, fail_on_adversarial: false, fail_on_high_variance: false };

const sha256 = (text: string | null | undefined) => createHash('sha256').update(text ?? '', 'utf8').digest('hex');

function judgeOf(deps: ServiceDeps, evaluators: number, settings: JudgeSettings): RunJudge {
  const llm = deps.llm;
  return {
    provider: llm?.provider ?? null,
    model: llm?.model ?? null,
    prompt_version: settings.prompt_version,
    evaluators,
    temperature: settings.temperature,
  };
}

/** The gate's reducer in its normal spelling (docs/behavior.md "Evaluation repeats"); 422 for anything else. */
function reducerOf(text: string | undefined): string {
  const reducer = text === undefined ? DEFAULT_REDUCER : parseReducer(text);
  if (!reducer) throw new ValidationError('gate.reducer must be all, majority or min-rate:R with 0 < R <= 1', [{ path: 'gate.reducer', message: 'unknown reducer' }]);
  return reducerName(reducer);
}

function newRun(deps: ServiceDeps, input: CreateRunInput, settings: JudgeSettings): EvaluationRun {
  return {
    id: newId(deps.clock.now()),
    created_at: deps.clock.now().toISOString(),
    finished_at: null,
    label: input.label ?? null,
    git: { commit: input.git?.commit ?? null, branch: input.git?.branch ?? null },
    ci_provider: input.ci_provider ?? null,
    judge: judgeOf(deps, input.num_evals, settings),
    gate: {
      min_score: input.gate?.min_score ?? null,
      fail_on_adversarial: input.gate?.fail_on_adversarial ?? false,
      fail_on_high_variance: input.gate?.fail_on_high_variance ?? false,
      reducer: reducerOf(input.gate?.reducer),
    },
    status: 'running',
    summary: summarize([], 0),
    baseline_id: null,
    comparison: null,
    blessed: false,
  };
}

/** POST /v1/evaluations: a run that cases are then added to. */
export async function createRun(deps: ServiceDeps, scope: Scope, input: CreateRunInput, settings: JudgeSettings): Promise<EvaluationRun> {
  const run = newRun(deps, input, settings);
  await deps.storage.evaluationRuns.putRuns(scope, [run]);
  return run;
}

async function mustGet(deps: ServiceDeps, scope: Scope, id: string): Promise<EvaluationRun> {
  const run = await deps.storage.evaluationRuns.getRun(scope, id);
  if (!run) throw new NotFoundError(`evaluation run ${id} not found`);
  return run;
}

/**
 * The run an evaluate with `run_id` adds its case to, checked before any LLM call is paid for:
 * it must exist in the scope and still be running. Null without a run_id.
 */
export async function runForCase(deps: ServiceDeps, scope: Scope, input: Pick<EvaluateInput, 'run_id'>): Promise<EvaluationRun | null> {
  if (input.run_id === undefined) return null;
  const run = await mustGet(deps, scope, input.run_id);
  if (run.status !== 'running') throw new ConflictError(`evaluation run ${run.id} is finished (${run.status}); start a new run`);
  return run;
}

export type CaseResult = { result: EvaluateResponse; error: null } | { result: null; error: string };

/** The recorded case of one evaluation (its result or why it failed). */
function caseOf(deps: ServiceDeps, input: EvaluateInput, gate: RunGate, outcome: CaseResult, durationMs: number): RunCase {
  const caseId = input.case_id ?? defaultCaseId(input.task);
  const r = outcome.result;
  const gateFailures = r ? gateFailuresOf(r, gate, (n) => String(Math.round(n * 100) / 100)) : [`not evaluated: ${outcome.error}`];
  return {
    case_id: caseId,
    name: input.name ?? caseId,
    task: input.task ?? null,
    code: input.code,
    output: input.output ?? null,
    task_hash: sha256(input.task),
    code_hash: sha256(input.code),
    output_hash: sha256(input.output),
    evaluators: r ? r.scores.map((s, i) => ({ evaluator: i + 1, score: s.overall, feedback: s.feedback })) : [],
    median: r ? r.median_score : null,
    variance: r ? r.variance : null,
    adversarial: r ? r.adversarial_detected : null,
    passed: gateFailures.length === 0,
    gate_failures: gateFailures,
    repeats: 1,
    pass_rate: null,
    flaky: null,
    tokens: r ? { input: r.tokens.input, output: r.tokens.output } : null,
    cost_usd: r ? r.cost_usd : null,
    duration_ms: Math.max(0, durationMs),
    cache_hit: r ? r.cache_hit : null,
    cache_hits: r ? (r.cache_hit ? 1 : 0) : null,
    failed_evaluators: r ? r.failed_evaluators : 0,
    error: outcome.error,
    evaluated_at: deps.clock.now().toISOString(),
  };
}

/**
 * A repeat (`sample` > 0) of a case the run already has joins it (docs/behavior.md
 * "Evaluation runs"); any other evaluation is the case as it stands (a first repeat starts the
 * case afresh).
 */
async function withEarlierRepeats(deps: ServiceDeps, scope: Scope, run: EvaluationRun, input: EvaluateInput, judged: RunCase): Promise<RunCase> {
  if (input.sample === 0) return judged;
  const earlier = (await deps.storage.evaluationRuns.listCases(scope, run.id)).find((c) => c.case_id === judged.case_id);
  if (!earlier) return judged;
  return mergeRepeat(earlier, judged, parseReducer(run.gate.reducer ?? 'all') ?? DEFAULT_REDUCER);
}

/**
 * Records one evaluation: as a case of `run`, or (run null) as a run of one case, finished at
 * once without a gate beyond "every evaluator answered". `judged` is this evaluation alone
 * (what its answer echoes); `case` is the case as the run now holds it, its repeats merged.
 */
export async function recordCase(
  deps: ServiceDeps,
  scope: Scope,
  run: EvaluationRun | null,
  input: EvaluateInput,
  outcome: CaseResult,
  durationMs: number,
  settings: JudgeSettings,
): Promise<{ run: EvaluationRun; case: RunCase; judged: RunCase }> {
  const repo = deps.storage.evaluationRuns;
  if (run) {
    const judged = caseOf(deps, input, run.gate, outcome, durationMs);
    const recorded = await withEarlierRepeats(deps, scope, run, input, judged);
    if (!(await repo.putCase(scope, run.id, recorded))) throw new NotFoundError(`evaluation run ${run.id} not found`);
    return { run, case: recorded, judged };
  }
  const single = newRun(deps, { num_evals: input.num_evals }, settings);
  const recorded = caseOf(deps, input, NO_GATE, outcome, durationMs);
  const summary = summarize([recorded], durationMs);
  const finished: EvaluationRun = {
    ...single, summary, status: runStatus(summary, null, 0), finished_at: deps.clock.now().toISOString(),
  };
  await repo.putRuns(scope, [{ ...single }]);
  await repo.putCase(scope, single.id, recorded);
  await repo.putRuns(scope, [finished]);
  return { run: finished, case: recorded, judged: recorded };
}

/** A run's summary as of now: stored once finished, computed from its cases while it runs. */
async function withLiveSummary(deps: ServiceDeps, scope: Scope, run: EvaluationRun, cases?: RunCase[]): Promise<EvaluationRun> {
  if (run.status !== 'running') return run;
  const all = cases ?? (await deps.storage.evaluationRuns.listCases(scope, run.id));
  return { ...run, summary: summarize(all, deps.clock.now().getTime() - Date.parse(run.created_at)) };
}

/** GET /v1/evaluations/{id} */
export async function getRun(deps: ServiceDeps, scope: Scope, id: string): Promise<RunDetailResponse> {
  const run = await mustGet(deps, scope, id);
  const cases = await deps.storage.evaluationRuns.listCases(scope, id);
  return { run: await withLiveSummary(deps, scope, run, cases), cases };
}

/** GET /v1/evaluations: newest first; the cursor is the previous page's last run id. */
export async function listRuns(deps: ServiceDeps, scope: Scope, input: RunListInput): Promise<RunListResponse> {
  if (input.cursor !== undefined && !RunId.safeParse(input.cursor).success) {
    throw new ValidationError('cursor is not one this listing gave out', [{ path: 'cursor', message: 'unknown cursor' }]);
  }
  const rows = await deps.storage.evaluationRuns.listRuns(scope, {
    label: input.label, branch: input.branch, status: input.status, blessed: input.blessed, before: input.cursor, limit: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const runs = await Promise.all(page.map((r) => withLiveSummary(deps, scope, r)));
  return { runs, next_cursor: rows.length > input.limit ? page[page.length - 1].id : null };
}

/**
 * A baseline by run id, or by label (that label's blessed run). An id that names no run is a
 * 404; a label without a blessed run yet answers null (the first run of a label has nothing
 * to compare with).
 */
export async function resolveBaseline(deps: ServiceDeps, scope: Scope, ref: string): Promise<EvaluationRun | null> {
  const byId = RunId.safeParse(ref).success ? await deps.storage.evaluationRuns.getRun(scope, ref) : null;
  if (byId) return byId;
  const [blessed] = await deps.storage.evaluationRuns.listRuns(scope, { label: ref, blessed: true, limit: 1 });
  if (blessed) return blessed;
  if (RunId.safeParse(ref).success) throw new NotFoundError(`evaluation run ${ref} not found`);
  return null;
}

async function comparison(deps: ServiceDeps, scope: Scope, run: EvaluationRun, runCases: RunCase[], baseline: EvaluationRun, delta: number): Promise<CompareResponse> {
  const baseCases = await deps.storage.evaluationRuns.listCases(scope, baseline.id);
  const { cases, counts } = compareCases(runCases, baseCases, delta);
  const base = await withLiveSummary(deps, scope, baseline, baseCases);
  const rate = run.summary.pass_rate;
  const baseRate = base.summary.pass_rate;
  return {
    run, baseline: base, delta, counts,
    pass_rate_delta: rate !== null && baseRate !== null ? rate - baseRate : null,
    cases,
  };
}

/** GET /v1/evaluations/{id}/compare/{baseline} */
export async function compareRuns(deps: ServiceDeps, scope: Scope, id: string, baselineRef: string, delta = REGRESSION_DELTA): Promise<CompareResponse> {
  const run = await mustGet(deps, scope, id);
  const baseline = await resolveBaseline(deps, scope, baselineRef);
  if (!baseline) throw new NotFoundError(`no evaluation run ${baselineRef} and no blessed run labelled ${baselineRef}`);
  const cases = await deps.storage.evaluationRuns.listCases(scope, id);
  return comparison(deps, scope, await withLiveSummary(deps, scope, run, cases), cases, baseline, delta);
}

/** Marks `run` the baseline of its label; the label's previous baseline stops being one. */
async function blessed(deps: ServiceDeps, scope: Scope, run: EvaluationRun): Promise<EvaluationRun> {
  if (run.label === null) throw new ValidationError('only a labelled run can be a baseline: give the run a label', [{ path: 'label', message: 'required to bless' }]);
  if (run.status !== 'passed') throw new ConflictError(`evaluation run ${run.id} ${run.status === 'running' ? 'is still running' : `did not pass (${run.status})`}; only a passed run becomes a baseline`);
  const previous = await deps.storage.evaluationRuns.listRuns(scope, { label: run.label, blessed: true, limit: 10 });
  const now: EvaluationRun = { ...run, blessed: true };
  await deps.storage.evaluationRuns.putRuns(scope, [...previous.filter((p) => p.id !== run.id).map((p) => ({ ...p, blessed: false })), now]);
  return now;
}

/** POST /v1/evaluations/{id}/bless */
export async function blessRun(deps: ServiceDeps, scope: Scope, id: string): Promise<EvaluationRun> {
  return blessed(deps, scope, await mustGet(deps, scope, id));
}

/**
 * POST /v1/evaluations/{id}/finish: the summary from the cases, the comparison with the
 * baseline (when asked), the status, and the blessing when asked for and earned.
 */
export async function finishRun(deps: ServiceDeps, scope: Scope, id: string, input: FinishRunInput): Promise<FinishRunResponse> {
  const repo = deps.storage.evaluationRuns;
  const run = await mustGet(deps, scope, id);
  if (run.status !== 'running') throw new ConflictError(`evaluation run ${id} is already finished (${run.status})`);
  const baseline = input.baseline === undefined ? null : await resolveBaseline(deps, scope, input.baseline);
  if (baseline?.id === run.id) throw new ValidationError('a run cannot be its own baseline', [{ path: 'baseline', message: 'names this run' }]);

  let cases = await repo.listCases(scope, id);
  const known = new Set(cases.map((c) => c.case_id));
  const skipped = [...new Set(input.not_evaluated)].filter((caseId) => !known.has(caseId));
  for (const caseId of skipped) {
    await repo.putCase(scope, id, caseOf(deps, { code: '', num_evals: run.judge.evaluators, case_id: caseId, no_cache: false, sample: 0 }, run.gate, { result: null, error: 'the client could not evaluate this case' }, 0));
  }
  if (skipped.length > 0) cases = await repo.listCases(scope, id);

  const now = deps.clock.now();
  const summary = summarize(cases, now.getTime() - Date.parse(run.created_at));
  const delta = input.regression_delta ?? REGRESSION_DELTA;
  const summed: EvaluationRun = { ...run, summary, finished_at: now.toISOString(), baseline_id: baseline?.id ?? null };
  const compared = baseline ? await comparison(deps, scope, summed, cases, baseline, delta) : null;
  let finished: EvaluationRun = { ...summed, comparison: compared?.counts ?? null, status: runStatus(summary, compared?.counts ?? null, 0) };
  await repo.putRuns(scope, [finished]);
  if (input.bless_on_pass && finished.status === 'passed' && finished.label !== null) finished = await blessed(deps, scope, finished);
  return { run: finished, comparison: compared ? { ...compared, run: finished } : null };
}

/**
 * Retention of runs: a run created more than `retentionDays` ago goes with its cases, except
 * the blessed ones (a label's baseline stays until another run replaces it). Returns how many
 * went (or, dry, would go).
 */
export async function purgeExpiredRuns(deps: ServiceDeps, scope: Scope, retentionDays: number, now: Date, dryRun: boolean): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000).toISOString();
  const repo = deps.storage.evaluationRuns;
  let purged = 0;
  for (;;) {
    const expired = await repo.listRuns(scope, { blessed: false, created_before: cutoff, limit: 500 });
    if (expired.length === 0) return purged;
    if (dryRun) {
      purged += expired.length;
      if (expired.length < 500) return purged;
      const rest = await repo.listRuns(scope, { blessed: false, created_before: cutoff, before: expired[expired.length - 1].id, limit: 1_000_000 });
      return purged + rest.length;
    }
    purged += await repo.deleteRuns(scope, expired.map((r) => r.id));
  }
}
