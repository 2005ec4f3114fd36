import type { Command } from 'commander';
import { ApiError, type EvaluateRequest, type EvaluateResponse } from '../src/client/index.js';
import { formatNumber } from '../src/core/output-numbers.js';
import { SUCCESS_EVAL_SCORE } from '../src/core/roi.js';
import { junitXml, type CaseOutcome } from './evaluate-junit.js';
import { appendStepSummary } from './evaluate-summary.js';
import { addAsyncOptions, printAccepted, type AsyncOptionValues } from './shared/async-jobs.js';
import { action, errorViewOf, ioOf, type Io } from './shared/context.js';
import { ExitCode, exitCodeFor, UsageError } from './shared/exit-codes.js';
import { assertWritableFile, resolveOutputTarget, writeOutput } from './shared/files.js';
import { assertSingleStdin, readStdin, readTextArg, readTextFile } from './shared/input.js';
import { addClientOptions, integerIn, numberIn, withClient, type ClientOptionValues } from './shared/options.js';
import { printError, snippet, table, type ErrorView, type Output } from './shared/output.js';

interface EvaluateOptions extends ClientOptionValues, AsyncOptionValues {
  task?: string;
  code?: string;
  output?: string;
  numEvals?: number;
  patternKey?: string;
  minScore?: number;
  failOnAdversarial?: boolean;
  failOnHighVariance?: boolean;
  junit?: string;
  batch?: string;
  concurrency: number;
  recallId?: string;
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
    .option('--recall-id <id>', "with --pattern-key: report the gate's verdict as the outcome of reusing that match of this recall (source evaluator)")
    .option('--min-score <score>', 'exit 100 when the median score is below this (0 to 10)', numberIn(0, 10))
    .option('--fail-on-adversarial', 'exit 100 when hard-coded or faked output is detected')
    .option('--fail-on-high-variance', 'exit 100 when the evaluators disagree (variance > 1.5)')
    .option('--junit <file>', 'write a JUnit XML report (one testcase per case)')
    .option('--batch <file>', 'evaluate every line of a JSONL file ({id?, task?, code, output?, pattern_key?}; name is an alias of id); - for stdin')
    .option('--concurrency <n>', 'cases evaluated at the same time with --batch, 1 to 32', integerIn(1, 32), 4);
  addClientOptions(cmd);
  addAsyncOptions(cmd);

  cmd.action(action(async (opts: EvaluateOptions, command: Command) => {
    const io = ioOf(command);
    const cases = opts.batch !== undefined ? await batchCases(opts, io) : [await singleCase(opts, io)];
    if (opts.async && !opts.wait && opts.batch !== undefined) throw new UsageError('--async submits one evaluation; with --batch use --wait');
    if (opts.recallId !== undefined) {
      if (opts.batch !== undefined) throw new UsageError('--recall-id reports one evaluation: not with --batch');
      if (opts.patternKey === undefined) throw new UsageError('--recall-id needs --pattern-key (the match that was reused)');
      if (opts.async && !opts.wait) throw new UsageError('--recall-id needs the verdict: with --async use --wait');
    }
    // Found out now, not after the LLM calls were paid for: the report's folder is created and
    // the file must be writable.
    if (opts.junit) await assertWritableFile(opts.junit, '--junit');
    return withClient(opts, command, async (client, out) => {
      if (opts.async && !opts.wait) return printAccepted(out, await client.jobs.submit('evaluate', cases[0].request));
      // --wait: each case runs as a background job (same result; survives a server restart).
      const evaluateOne = (req: EvaluateRequest) => (opts.wait ? client.jobs.run('evaluate', req) : client.llm.evaluate(req));
      const outcomes = opts.batch !== undefined
        ? await runBatch(io, out, cases, opts.concurrency, (c) => evaluateCase(evaluateOne, c, opts))
        : [await out.withSpinner('evaluating…', () => evaluateCase(evaluateOne, cases[0], opts))];
      if (opts.recallId !== undefined && outcomes[0].result) {
        // The gate decides (docs/behavior.md "Outcomes"); without gate flags, the outcome's own
        // gate: a median of at least SUCCESS_EVAL_SCORE and no faked output.
        const failures = outcomeGateFailures(outcomes[0].result, opts);
        await client.reportOutcome({
          recall_id: opts.recallId,
          pattern_key: opts.patternKey!,
          passed: failures.length === 0,
          score: outcomes[0].result.median_score,
          detail: failures.length > 0 ? failures.join('; ').slice(0, 2000) : undefined,
          source: 'evaluator',
        });
      }
      if (opts.junit) await writeOutput(await resolveOutputTarget(opts.junit), junitXml(outcomes, new Date()));
      if (io.env.stepSummary) await appendStepSummary(io.env.stepSummary, outcomes);
      const view = errorViewOf(command);
      return opts.batch !== undefined ? reportBatch(io, out, cases, outcomes, view) : reportSingle(io, out, outcomes[0], opts, view);
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

/** The gate that decides an evaluated reuse's outcome: the flags given, else a successful run's line. */
function outcomeGateFailures(result: EvaluateResponse, opts: EvaluateOptions): string[] {
  const gated = opts.minScore !== undefined || opts.failOnAdversarial === true || opts.failOnHighVariance === true;
  return gateFailures(result, gated ? opts : { minScore: SUCCESS_EVAL_SCORE, failOnAdversarial: true });
}

async function evaluateCase(
  evaluateOne: (req: EvaluateRequest) => Promise<EvaluateResponse>,
  c: EvalCase,
  opts: EvaluateOptions,
): Promise<CaseOutcome & { cause?: unknown }> {
  const started = performance.now();
  try {
    const result = await evaluateOne(c.request);
    return { name: c.name, seconds: (performance.now() - started) / 1000, result, gateFailures: gateFailures(result, opts), error: null };
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

function reportBatch(io: Io, out: Output, cases: EvalCase[], outcomes: (CaseOutcome & { cause?: unknown })[], view: ErrorView): number {
  const passed = outcomes.filter((o) => !o.error && o.gateFailures.length === 0).length;
  const gated = outcomes.filter((o) => !o.error && o.gateFailures.length > 0).length;
  const errored = outcomes.filter((o) => o.error);
  const firstError = errored[0];
  const exitCode = firstError ? exitCodeFor(firstError.cause) : gated > 0 ? ExitCode.BELOW_MIN_SCORE : ExitCode.OK;
  const summary = { cases: outcomes.length, passed, gate_failed: gated, errors: errored.length, exit_code: exitCode };
  const json = {
    cases: outcomes.map((o, i) => ({ ...(cases[i].id === undefined ? {} : { id: cases[i].id }), name: o.name, result: o.result, gate_failures: o.gateFailures, error: o.error })),
    summary,
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
