import { formatNumber } from '../src/core/output-numbers.js';
import type { FinishedRun } from './evaluate-run.js';

/**
 * The pull-request comment `service evaluate --markdown FILE` writes: one body a CI step posts
 * (and later replaces: the first line is a marker the workflow in docs/cli.md finds the
 * comment by). Pass rate against the baseline, the newly regressed cases by name, missing and
 * flaky cases, cost, cache hits and a link to the run in the console.
 */
export const COMMENT_MARKER = '<!-- service-evaluate -->';

const STATUS_ICON = { passed: '✅', regressed: '⚠️', failed: '❌', running: '⏳' } as const;
const MAX_NAMED = 20;

const percent = (rate: number | null) => (rate === null ? '-' : `${formatNumber(Math.round(rate * 1000) / 10)}%`);
const code = (text: string) => `\`${text.replace(/`/g, "'").replace(/\r?\n/g, ' ')}\``;
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

function named(names: string[]): string {
  const shown = names.slice(0, MAX_NAMED).join(', ');
  return names.length > MAX_NAMED ? `${shown} and ${names.length - MAX_NAMED} more` : shown;
}

function score(n: number | null): string {
  return n === null ? '-' : formatNumber(n);
}

export function prCommentMarkdown(finished: FinishedRun, link: string): string {
  const { run, comparison, cases } = finished;
  const s = run.summary;
  const lines = [COMMENT_MARKER, `### ${STATUS_ICON[run.status]} service evaluate: ${s.passed} of ${s.cases} passed (${percent(s.pass_rate)}) — ${run.status}`, ''];

  const context = [run.label ? `label ${code(run.label)}` : null, run.git.branch ? `branch ${code(run.git.branch)}` : null, run.git.commit ? `commit ${code(run.git.commit.slice(0, 12))}` : null]
    .filter((x) => x !== null);
  if (context.length > 0) lines.push(context.join(' · '), '');

  if (comparison) {
    const delta = comparison.pass_rate_delta;
    const sign = delta === null ? '' : delta > 0 ? '+' : delta < 0 ? '−' : '±';
    const points = delta === null ? '-' : `${sign}${formatNumber(Math.abs(Math.round(delta * 1000) / 10))} pts`;
    lines.push(`**Pass rate** ${percent(s.pass_rate)} vs baseline ${percent(comparison.baseline.summary.pass_rate)} (${points}), baseline run ${code(comparison.baseline.id)}`);
    const c = comparison.counts;
    lines.push(`${c.regressed} regressed · ${c.improved} improved · ${c.unchanged} unchanged · ${c.new} new · ${c.missing} missing (noise margin ${formatNumber(comparison.delta)})`, '');
    const regressed = comparison.cases.filter((x) => x.change === 'regressed');
    if (regressed.length > 0) {
      lines.push(`**Newly regressed (${regressed.length}):** ${named(regressed.map((x) => `${code(x.name)} (${score(x.baseline_median)} → ${score(x.median)}${x.passed === false ? ', fails the gate' : ''})`))}`);
    }
    const missing = comparison.cases.filter((x) => x.change === 'missing');
    if (missing.length > 0) lines.push(`**Missing (${missing.length}, fails the gate):** ${named(missing.map((x) => code(x.name)))}`);
    const added = comparison.cases.filter((x) => x.change === 'new');
    if (added.length > 0) lines.push(`**New (${added.length}):** ${named(added.map((x) => code(x.name)))}`);
  } else {
    lines.push('No baseline to compare with.');
  }

  const flaky = cases.filter((c) => c.flaky === true);
  if (flaky.length > 0) lines.push(`**Flaky (${flaky.length}):** ${named(flaky.map((c) => `${code(c.name)} (pass rate ${percent(c.pass_rate)})`))}`);
  const failing = cases.filter((c) => !c.passed);
  if (failing.length > 0) lines.push(`**Failing the gate (${failing.length}):** ${named(failing.map((c) => code(c.name)))}`);
  lines.push('');

  const cost = s.cost_usd === null ? 'cost not reported' : `cost $${s.cost_usd.toFixed(4)}`;
  const tokens = s.tokens === null ? '' : ` (${s.tokens.input} input + ${s.tokens.output} output tokens)`;
  lines.push(`${cost}${tokens} · judge cache: ${s.cache_hits} hits, ${s.cache_misses} misses · pass^k ${percent(s.pass_hat_k)}`);
  lines.push('', `[Run ${code(run.id)} in the console](${link})`, '');

  lines.push('<details><summary>Cases</summary>', '', '| case | median | pass rate | status |', '| --- | --- | --- | --- |');
  for (const c of cases) {
    const status = c.error !== null ? `error: ${c.error}` : c.passed ? 'pass' : `fail: ${c.gate_failures.join('; ')}`;
    lines.push(`| ${cell(c.name)} | ${score(c.median)} | ${percent(c.pass_rate)} | ${cell(status)} |`);
  }
  lines.push('', '</details>', '');
  return lines.join('\n');
}
