import type { Command } from 'commander';
import { ApiError, type EvaluateRequest, type EvaluateResponse } from '../src/client/index.js';
import { formatNumber } from '../src/core/output-numbers.js';
import { junitXml, type CaseOutcome } from './evaluate-junit.js';
import { prCommentMarkdown } from './evaluate-markdown.js';
import { caseIds, consoleLink, createRunBody, exitCodeOfRun, finishAndRead, type FinishedRun, type RunFlags } from './evaluate-run.js';
import { appendStepSummary } from './evaluate-summary.js';
import { addAsyncOptions, printAccepted, type AsyncOptionValues } from './shared/async-jobs.js';
import { action, errorViewOf, ioOf, type Io } from './shared/context.js';
import { ExitCode, exitCodeFor, UsageError } from './shared/exit-codes.js';
import { assertWritableFile, resolveOutputTarget, writeOutput } from './shared/files.js';
import { assertSingleStdin, readStdin, readTextArg, readTextFile } from './shared/input.js';
import { addClientOptions, integerIn, numberIn, withClient, type ClientOptionValues } from './shared/options.js';
import { printError, snippet, table, type ErrorView, type Output } from './shared/output.js';

interface EvaluateOptions extends ClientOptionValues, AsyncOptionValues, RunFlags {
  task?: string;
  code?: string;
  output?: string;
  numEvals?: number;
  patternKey?: string;
  minScore?: number;
  failOnAdversarial?: boolean;
  failOnHighVariance?: boolean;
  junit?: string;
  markdown?: string;
  batch?: string;
  concurrency: number;
}

interface EvalCase {
  /** The case's `id` (or `name`) from the batch line, when it has one. */
  id?: string;
  /** How reports name the case: its id, else the line and task. */
  name: string;
  request: EvaluateRequest;
}

export function register(program: Command): void {
  const cmd = program
    .command('evaluate')
    .description('score code with several independent LLM evaluators; a CI quality gate with --min-score')
    .option('--task <text>', 'what the code should do: literal text, - for stdin, @file')
    .option('--code <text>', 'the code to evaluate: literal text, - for stdin, @file (required without --batch)')
    .option('--output <text>', "the program's output: literal text, - for stdin, @file")
    .option('--num-evals <n>', 'independent evaluators, 1 to 10 (server default 3)', integerIn(1, 10))
    .option('--pattern-key <key>', 'record the median as an eval observation of this stored pattern')
    .option('--min-score <score>', 'exit 100 when the median score is below this (0 to 10)', numberIn(0, 10))
    .option('--fail-on-adversarial', 'exit 100 when hard-coded or faked output is detected')
    .option('--fail-on-high-variance', 'exit 100 when the evaluators disagree (variance > 1.5)')
    .option('--junit <file>', 'write a JUnit XML report (one testcase per case)')
    .option('--batch <file>', 'evaluate every line of a JSONL file ({id?, task?, code, output?, pattern_key?}; name is an alias of id); - for stdin')
    .option('--concurrency <n>', 'cases evaluated at the same time with --batch, 1 to 32', integerIn(1, 32), 4)
    .option('--label <label>', 'name the run (e.g. main, pr-42); a label\'s blessed run is its baseline')
    .option('--baseline <run>', 'compare with this run (a run id, or a label: its blessed run); exit 101 when a case regressed')
    .option('--bless-on-pass', 'make this run the baseline of its --label when it passed')
    .option('--regression-delta <points>', 'a median drop of more than this is a regression (default 1)', numberIn(0, 10))
    .option('--markdown <file>', 'write a pull-request comment body (pass rate against the baseline, regressions, flaky, cost)')
    .option('--git-commit <sha>', 'the commit evaluated (default: from the CI environment, e.g. GITHUB_SHA)')
    .option('--git-branch <name>', 'the branch evaluated (default: from the CI environment, e.g. GITHUB_REF_NAME)')
    .option('--ci-provider <name>', 'the CI system (default: detected, e.g. github-actions)');
  addClientOptions(cmd);
  addAsyncOptions(cmd);

  // The client options are parsed by `evaluate` itself (options are not positional), so bless
  // reads them from its parent.
  cmd
    .command('bless')
    .description('make a passed run the baseline of its label (a failing run never becomes one)')
    .argument('<run>', 'the run id (printed by evaluate, listed by `service evaluations list`)')
    .action(action(async (runId: string, _opts: unknown, command: Command) =>
      withClient(command.parent!.opts<ClientOptionValues>(), command, async (client, out) => {
        const run = await client.evaluations.bless(runId);
        out.result(run, () => `run ${run.id} is now the baseline of ${run.label}`);
      })));

  cmd.action(action(async (opts: EvaluateOptions, command: Command) => {
    const io = ioOf(command);
    const cases = opts.batch !== undefined ? await batchCases(opts, io) : [await singleCase(opts, io)];
    if (opts.async && !opts.wait && opts.batch !== undefined) throw new UsageError('--async submits one evaluation; with --batch use --wait');
    // Found out now, not after the LLM calls were paid for: the report's folder is created and
    // the file must be writable.
    if (opts.junit) await assertWritableFile(opts.junit, '--junit');
    if (opts.markdown) await assertWritableFile(opts.markdown, '--markdown');
    if (opts.async && !opts.wait && (opts.label ?? opts.baseline ?? opts.blessOnPass ?? opts.markdown) !== undefined) {
      throw new UsageError('--async without --wait records a run of one case; --label, --baseline, --bless-on-pass and --markdown need --wait');
    }
    return withClient(opts, command, async (client, out) => {
      if (opts.async && !opts.wait) return printAccepted(out, await client.jobs.submit('evaluate', cases[0].request));
      // One run holds every case (docs/behavior.md "Evaluation runs").
      const run = await client.evaluations.create(createRunBody(opts, io.env));
      const ids = caseIds(cases.map((c) => ({ id: c.id, task: c.request.task })));
      cases.forEach((c, i) => (c.request = { ...c.request, run_id: run.id, case_id: ids[i], name: c.name }));
      // --wait: each case runs as a background job (same result; survives a server restart).
      const evaluateOne = (req: EvaluateRequest) => (opts.wait ? client.jobs.run('evaluate', req) : client.llm.evaluate(req));
      const outcomes = opts.batch !== undefined
        ? await runBatch(io, out, cases, opts.concurrency, (c) => evaluateCase(evaluateOne, c, opts))
        : [await out.withSpinner('evaluating…', () => evaluateCase(evaluateOne, cases[0], opts))];
      const finished = await finishAndRead(client, run.id, opts, ids.filter((_, i) => outcomes[i].error !== null));
      const byId = new Map(finished.cases.map((c) => [c.case_id, c]));
      outcomes.forEach((o, i) => (o.runCase = byId.get(ids[i]) ?? null));
      if (opts.junit) await writeOutput(await resolveOutputTarget(opts.junit), junitXml(outcomes, new Date(), finished));
      if (opts.markdown) await writeOutput(await resolveOutputTarget(opts.markdown), prCommentMarkdown(finished, consoleLink(opts.url, run.id)));
      if (io.env.stepSummary) await appendStepSummary(io.env.stepSummary, outcomes);
      const view = errorViewOf(command);
      const code = opts.batch !== undefined ? reportBatch(io, out, cases, outcomes, view, finished) : reportSingle(io, out, outcomes[0], opts, view);
      if (opts.label !== undefined || opts.baseline !== undefined || opts.blessOnPass) reportRun(io, out, finished);
      return code === ExitCode.OK ? exitCodeOfRun(finished.run) : code;
    });
  }));
}

async function singleCase(opts: EvaluateOptions, io: Io): Promise<EvalCase> {
  if (opts.code === undefined) throw new UsageError('--code is required (or use --batch FILE)');
  assertSingleStdin({ '--task': opts.task, '--code': opts.code, '--output': opts.output });
  const task = opts.task === undefined ? undefined : await readTextArg(opts.task, io.stdin, '--task');
  if (task !== undefined && task.trim() === '') throw new UsageError('--task must not be blank (leave it out to evaluate without a task)');
  const code = await readTextArg(opts.code, io.stdin, '--code');
  const output = opts.output === undefined ? undefined : await readTextArg(opts.output, io.stdin, '--output');
  return {
    name: task ? snippet(task, 80) : 'evaluate',
    request: { task, code, output, num_evals: opts.numEvals, pattern_key: opts.patternKey },
  };
}

/** `id` names a case as in the other batches; `name` is its older spelling, still accepted. */
const BATCH_KEYS = new Set(['id', 'task', 'code', 'output', 'name', 'pattern_key']);

async function batchCases(opts: EvaluateOptions, io: Io): Promise<EvalCase[]> {
  for (const flag of ['task', 'code', 'output', 'patternKey'] as const) {
    if (opts[flag] !== undefined) throw new UsageError('--batch takes task, code and output from the file; drop --task/--code/--output/--pattern-key');
  }
  const file = opts.batch!;
  const text = file === '-' ? await readStdin(io.stdin) : await readTextFile(file, '--batch');
  const cases: EvalCase[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const where = `--batch line ${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new UsageError(`${where}: not valid JSON`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${where}: expected a JSON object`);
    const row = value as Record<string, unknown>;
    const unknown = Object.keys(row).filter((k) => !BATCH_KEYS.has(k));
    if (unknown.length > 0) throw new UsageError(`${where}: unknown field ${unknown.join(', ')} (allowed: ${[...BATCH_KEYS].join(', ')})`);
    if (typeof row.code !== 'string' || row.code.trim() === '') throw new UsageError(`${where}: "code" must be a non-empty string`);
    for (const key of ['task', 'output', 'name', 'pattern_key']) {
      if (row[key] !== undefined && typeof row[key] !== 'string') throw new UsageError(`${where}: "${key}" must be a string`);
    }
    if (row.id !== undefined && typeof row.id !== 'string' && typeof row.id !== 'number') throw new UsageError(`${where}: "id" must be a string or a number`);
    if (row.id !== undefined && row.name !== undefined) throw new UsageError(`${where}: give "id" or its alias "name", not both`);
    const given = row.id ?? row.name;
    if (given !== undefined && (String(given).trim() === '' || String(given).length > 190)) throw new UsageError(`${where}: "id" must be 1 to 190 characters`);
    const task = row.task as string | undefined;
    if (task !== undefined && task.trim() === '') throw new UsageError(`${where}: "task" must not be blank (leave it out to evaluate without a task)`);
    const id = row.id !== undefined ? String(row.id) : (row.name as string | undefined);
    cases.push({
      id,
      name: id ?? (task ? `line ${index + 1}: ${snippet(task, 60)}` : `line ${index + 1}`),
      request: { task, code: row.code, output: row.output as string | undefined, num_evals: opts.numEvals, pattern_key: row.pattern_key as string | undefined },
    });
  });
  if (cases.length === 0) throw new UsageError(`--batch file "${file}" has no cases`);
  return cases;
}

/** The gates a result fails (empty: it passes). */
export function gateFailures(result: EvaluateResponse, opts: Pick<EvaluateOptions, 'minScore' | 'failOnAdversarial' | 'failOnHighVariance'>): string[] {
  const reasons: string[] = [];
  if (opts.minScore !== undefined && result.median_score < opts.minScore) {
    reasons.push(`median score ${formatNumber(result.median_score)} is below --min-score ${opts.minScore}`);
  }
  if (opts.failOnAdversarial && result.adversarial_detected) reasons.push('hard-coded or faked output detected');
  if (opts.failOnHighVariance && result.high_variance) reasons.push(`evaluators disagree (variance ${formatNumber(result.variance)} > 1.5)`);
  return reasons;
}

async function evaluateCase(
  evaluateOne: (req: EvaluateRequest) => Promise<EvaluateResponse>,
  c: EvalCase,
  opts: EvaluateOptions,
): Promise<CaseOutcome & { cause?: unknown }> {
  const started = performance.now();
  try {
    const result = await evaluateOne(c.request);
    // The run's gate decides (it also fails a case an evaluator gave no result for).
    return { name: c.name, seconds: (performance.now() - started) / 1000, result, gateFailures: result.gate_failures ?? gateFailures(result, opts), error: null };
  } catch (err) {
    const kind = err instanceof ApiError ? `http-${err.status}` : err instanceof Error ? err.name : 'error';
    const message = err instanceof ApiError ? err.detail : err instanceof Error ? err.message : String(err);
    return { name: c.name, seconds: (performance.now() - started) / 1000, result: null, gateFailures: [], error: { kind, message }, cause: err };
  }
}

/** Runs the cases with at most `limit` in flight, drawing a progress bar on a terminal. */
async function runBatch<T extends CaseOutcome>(io: Io, out: Output, cases: EvalCase[], limit: number, run: (c: EvalCase) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(cases.length);
  let done = 0;
  const bar = () => {
    const width = 20;
    const filled = Math.round((done / cases.length) * width);
    return `evaluating [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${cases.length}`;
  };
  const progress = await out.startSpinner(bar());
  const draw = () => progress.update(bar());
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      results[index] = await run(cases[index]);
      done++;
      draw();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(limit, cases.length) }, worker));
  } finally {
    progress.stop();
  }
  return results;
}

function reportSingle(io: Io, out: Output, outcome: CaseOutcome & { cause?: unknown }, opts: EvaluateOptions, view: ErrorView): number {
  if (outcome.error) {
    // --json makes this error JSON like every other one: CI steps parse it.
    printError(io, outcome.cause ?? new Error(outcome.error.message), view);
    return exitCodeFor(outcome.cause);
  }
  const result = outcome.result!;
  out.result(result, () => renderResult(out, result, outcome.gateFailures, opts));
  if (outcome.gateFailures.length > 0 && out.json) io.stderr.write(`gate failed: ${outcome.gateFailures.join('; ')}\n`);
  return outcome.gateFailures.length > 0 ? ExitCode.BELOW_MIN_SCORE : ExitCode.OK;
}

function renderResult(out: Output, r: EvaluateResponse, failures: string[], opts: EvaluateOptions): string {
  const c = out.color;
  const flags = [
    r.adversarial_detected ? c.red('adversarial output detected') : 'no adversarial output',
    r.high_variance ? c.yellow('high variance') : 'evaluators agree',
  ];
  const rows = r.scores.map((s, i) => [
    String(i + 1), formatNumber(s.overall), formatNumber(s.task_alignment), formatNumber(s.code_quality), formatNumber(s.workspace_usage), formatNumber(s.robustness), snippet(s.feedback, 60),
  ]);
  const lines = [
    `${c.bold('median score')} ${formatNumber(r.median_score)}  (variance ${formatNumber(r.variance)}; ${flags.join('; ')})`,
    table(['#', 'overall', 'task', 'quality', 'workspace', 'robustness', 'feedback'], rows, c),
  ];
  if (r.failed_evaluators > 0) lines.push(c.yellow(`${r.failed_evaluators} evaluator(s) failed; the others were aggregated`));
  if (r.feedback) lines.push('', c.bold('feedback'), ...r.feedback.split('\n').map((f) => `  - ${f}`));
  const gated = opts.minScore !== undefined || opts.failOnAdversarial || opts.failOnHighVariance;
  if (failures.length > 0) lines.push('', c.red(`gate failed: ${failures.join('; ')}`));
  else if (gated) lines.push('', c.green('gate passed'));
  return lines.join('\n');
}

function reportBatch(io: Io, out: Output, cases: EvalCase[], outcomes: (CaseOutcome & { cause?: unknown })[], view: ErrorView, finished: FinishedRun): number {
  const passed = outcomes.filter((o) => !o.error && o.gateFailures.length === 0).length;
  const gated = outcomes.filter((o) => !o.error && o.gateFailures.length > 0).length;
  const errored = outcomes.filter((o) => o.error);
  const firstError = errored[0];
  const exitCode = firstError ? exitCodeFor(firstError.cause) : gated > 0 ? ExitCode.BELOW_MIN_SCORE : ExitCode.OK;
  const finalCode = exitCode === ExitCode.OK ? exitCodeOfRun(finished.run) : exitCode;
  const summary = { cases: outcomes.length, passed, gate_failed: gated, errors: errored.length, exit_code: finalCode };
  const json = {
    cases: outcomes.map((o, i) => ({
      ...(cases[i].id === undefined ? {} : { id: cases[i].id }), name: o.name, result: o.result, gate_failures: o.gateFailures, error: o.error,
      case_id: o.runCase?.case_id ?? null,
    })),
    summary,
    run: finished.run,
    comparison: finished.comparison,
  };
  out.result(json, () => {
    const c = out.color;
    const rows = outcomes.map((o) => [
      o.name,
      o.result ? formatNumber(o.result.median_score) : '-',
      o.result ? formatNumber(o.result.variance) : '-',
      o.result ? (o.result.adversarial_detected ? 'yes' : 'no') : '-',
      o.error ? c.red(`error: ${snippet(o.error.message, 50)}`) : o.gateFailures.length > 0 ? c.red(`fail: ${snippet(o.gateFailures.join('; '), 50)}`) : c.green('pass'),
    ]);
    return [
      table(['case', 'median', 'variance', 'adversarial', 'status'], rows, c),
      '',
      `${outcomes.length} cases: ${passed} passed, ${gated} failed the gate, ${errored.length} errors`,
    ].join('\n');
  });
  for (const o of errored) printError(io, o.cause ?? new Error(o.error!.message), { ...view, subject: o.name });
  return exitCode;
}

/** The run's line on stderr: where to find it and how it compared (stdout stays the result). */
function reportRun(io: Io, out: Output, finished: FinishedRun): void {
  const { run, comparison } = finished;
  const c = out.color;
  const parts = [`run ${run.id}: ${run.status}`];
  if (comparison) {
    const k = comparison.counts;
    parts.push(`vs baseline ${comparison.baseline.id}: ${k.regressed} regressed, ${k.improved} improved, ${k.unchanged} unchanged, ${k.new} new, ${k.missing} missing`);
    const regressed = comparison.cases.filter((x) => x.change === 'regressed').map((x) => x.name);
    if (regressed.length > 0) parts.push(`regressed: ${regressed.join(', ')}`);
    const missing = comparison.cases.filter((x) => x.change === 'missing').map((x) => x.name);
    if (missing.length > 0) parts.push(`missing: ${missing.join(', ')}`);
  }
  if (run.blessed) parts.push(`blessed as the baseline of ${run.label}`);
  const line = parts.join('; ');
  io.stderr.write(`${run.status === 'passed' ? c.green(line) : run.status === 'regressed' ? c.yellow(line) : c.red(line)}\n`);
}
