import { Option, type Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import type { CompareResponse, EvaluationRun, RunDetailResponse } from '../src/client/index.js';
import { RUN_STATUSES } from '../src/core/vocabulary.js';
import { formatNumber } from '../src/core/output-numbers.js';
import { action } from './shared/context.js';
import { addClientOptions, integerIn, numberIn, withClient, type ClientOptionValues } from './shared/options.js';
import { snippet, table } from './shared/output.js';

interface ListOptions extends ClientOptionValues {
  label?: string;
  branch?: string;
  status?: (typeof RUN_STATUSES)[number];
  limit?: number;
  cursor?: string;
}

interface CompareOptions extends ClientOptionValues {
  regressionDelta?: number;
}

const percent = (rate: number | null) => (rate === null ? '-' : `${formatNumber(Math.round(rate * 1000) / 10)}%`);
const score = (n: number | null) => (n === null ? '-' : formatNumber(n));

function colourStatus(status: EvaluationRun['status'], c: ChalkInstance): string {
  if (status === 'passed') return c.green(status);
  if (status === 'regressed') return c.yellow(status);
  if (status === 'failed') return c.red(status);
  return status;
}

/** `service evaluations list | show | compare`: the project's evaluation runs (docs/cli.md). */
export function register(program: Command): void {
  const evaluations = program.command('evaluations').description('evaluation runs: every `service evaluate`, its cases and its comparison with a baseline');

  const list = evaluations
    .command('list', { isDefault: true })
    .description('runs of the project, newest first')
    .option('--label <label>', 'only runs with this label')
    .option('--branch <name>', 'only runs of this git branch')
    .addOption(new Option('--status <status>', 'only runs with this status').choices([...RUN_STATUSES]))
    .option('--limit <n>', 'runs to show, 1 to 100 (server default 20)', integerIn(1, 100))
    .option('--cursor <cursor>', 'the next page: the cursor the previous page printed');
  addClientOptions(list);
  list.action(action(async (opts: ListOptions, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.evaluations.list({ label: opts.label, branch: opts.branch, status: opts.status, limit: opts.limit, cursor: opts.cursor });
      out.result(res, () => {
        if (res.runs.length === 0) return 'no evaluation runs';
        const rows = res.runs.map((r) => [
          r.id, r.created_at, r.label ?? '-', r.git.commit?.slice(0, 12) ?? '-', colourStatus(r.status, out.color),
          `${r.summary.passed}/${r.summary.cases}`, percent(r.summary.pass_rate), r.summary.cost_usd === null ? '-' : `$${r.summary.cost_usd.toFixed(4)}`,
          r.blessed ? 'yes' : '',
        ]);
        const text = table(['run', 'created', 'label', 'commit', 'status', 'passed', 'pass rate', 'cost', 'baseline'], rows, out.color);
        return res.next_cursor ? `${text}\nmore: --cursor ${res.next_cursor}` : text;
      });
    })));

  const show = evaluations.command('show').description('one run with its cases').argument('<run>', 'the run id');
  addClientOptions(show);
  show.action(action(async (id: string, opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const detail = await client.evaluations.get(id);
      out.result(detail, () => renderRun(detail, out.color));
    })));

  const compare = evaluations
    .command('compare')
    .description('compare a run with a baseline case by case, regressions first')
    .argument('<run>', 'the run id')
    .argument('<baseline>', 'a run id, or a label (its blessed run)')
    .option('--regression-delta <points>', 'a median drop of more than this is a regression (default 1)', numberIn(0, 10));
  addClientOptions(compare);
  compare.action(action(async (id: string, baseline: string, opts: CompareOptions, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.evaluations.compare(id, baseline, opts.regressionDelta);
      out.result(res, () => renderComparison(res, out.color));
    })));
}

function runHeader(r: EvaluationRun, c: ChalkInstance): string {
  const where = [r.label && `label ${r.label}`, r.git.branch && `branch ${r.git.branch}`, r.git.commit && `commit ${r.git.commit.slice(0, 12)}`, r.ci_provider]
    .filter((x) => x).join(', ');
  return `${c.bold(`run ${r.id}`)} ${colourStatus(r.status, c)}${r.blessed ? ' (baseline)' : ''}  ${r.created_at}${where ? `  ${where}` : ''}\n` +
    `${r.summary.passed} of ${r.summary.cases} passed (${percent(r.summary.pass_rate)}), ${r.summary.flaky} flaky, judge ${r.judge.provider ?? '-'} ${r.judge.model ?? ''} ×${r.judge.evaluators}`;
}

function renderRun(d: RunDetailResponse, c: ChalkInstance): string {
  const rows = d.cases.map((k) => [
    snippet(k.name, 40), score(k.median), percent(k.pass_rate), k.flaky ? 'yes' : '',
    k.error !== null ? c.red(`error: ${snippet(k.error, 40)}`) : k.passed ? c.green('pass') : c.red(`fail: ${snippet(k.gate_failures.join('; '), 40)}`),
  ]);
  return [runHeader(d.run, c), '', d.cases.length === 0 ? 'no cases' : table(['case', 'median', 'pass rate', 'flaky', 'status'], rows, c)].join('\n');
}

function renderComparison(res: CompareResponse, c: ChalkInstance): string {
  const k = res.counts;
  const rows = res.cases.map((x) => [
    snippet(x.name, 40), x.change === 'regressed' || x.change === 'missing' ? c.red(x.change) : x.change === 'improved' ? c.green(x.change) : x.change,
    score(x.baseline_median), score(x.median), x.delta === null ? '-' : formatNumber(x.delta),
  ]);
  return [
    `${c.bold(`run ${res.run.id}`)} vs baseline ${res.baseline.id}: pass rate ${percent(res.run.summary.pass_rate)} vs ${percent(res.baseline.summary.pass_rate)}`,
    `${k.regressed} regressed, ${k.improved} improved, ${k.unchanged} unchanged, ${k.new} new, ${k.missing} missing (noise margin ${formatNumber(res.delta)})`,
    '',
    table(['case', 'change', 'baseline', 'now', 'delta'], rows, c),
  ].join('\n');
}
