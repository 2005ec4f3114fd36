import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { CaseOutcome } from './evaluate-junit.js';
import type { RepeatedOutcome, RunFigures } from './evaluate-repeats.js';
import { formatNumber, formatUsd } from '../src/core/output-numbers.js';

/**
 * The Markdown a CI job shows as its summary (GitHub Actions renders $GITHUB_STEP_SUMMARY):
 * a headline with the counts, then one table row per case.
 */
export function summaryMarkdown(outcomes: (CaseOutcome & Partial<Pick<RepeatedOutcome, 'figures' | 'notEvaluated'>>)[], figures?: RunFigures): string {
  const skipped = (o: (typeof outcomes)[number]) => o.notEvaluated !== undefined && o.notEvaluated !== null;
  const passed = outcomes.filter((o) => !skipped(o) && !o.error && o.gateFailures.length === 0).length;
  const gated = outcomes.filter((o) => !skipped(o) && !o.error && o.gateFailures.length > 0).length;
  const errors = outcomes.filter((o) => o.error).length;
  const notEvaluated = outcomes.filter(skipped).length;
  const icon = errors > 0 || gated > 0 || notEvaluated > 0 ? '❌' : '✅';
  const repeated = figures !== undefined && figures.repeats > 1;
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
  const rows = outcomes.map((o) => {
    const r = o.result;
    const status = skipped(o) ? 'not evaluated (--max-cost)' : o.error ? `error: ${o.error.message}` : o.gateFailures.length > 0 ? `fail: ${o.gateFailures.join('; ')}` : 'pass';
    const rate = o.figures?.pass_rate;
    const repeatCell = repeated ? ` ${rate === null || rate === undefined ? '-' : formatNumber(rate)}${o.figures?.flaky ? ' ⚠️ flaky' : ''} |` : '';
    return `| ${cell(o.name)} | ${r ? formatNumber(r.median_score) : '-'} | ${r ? formatNumber(r.variance) : '-'} | ${r ? (r.adversarial_detected ? 'yes' : 'no') : '-'} |${repeatCell} ${cell(status)} |`;
  });
  const footer: string[] = [];
  if (figures) {
    if (repeated) footer.push(`Repeats: ${figures.repeats} per case (reducer \`${figures.reducer}\`), pass^${figures.repeats} ${figures.pass_hat_k === null ? '-' : formatNumber(figures.pass_hat_k)}, ${figures.flaky} flaky.`);
    const cost = figures.cost_usd === null ? 'unknown (no price for the model)' : `$${formatUsd(figures.cost_usd)}`;
    footer.push(`Cost: ${cost} (${figures.tokens.input} input / ${figures.tokens.output} output tokens). Judge cache: ${figures.cache_hits} hits, ${figures.cache_misses} misses.`);
    if (figures.not_evaluated.length > 0) footer.push(`Not evaluated (--max-cost reached): ${figures.not_evaluated.map(cell).join(', ')}.`);
  }
  return [
    `### ${icon} service evaluate: ${passed} of ${outcomes.length} passed`,
    '',
    `${gated} failed the gate, ${errors} could not be evaluated.`,
    '',
    `| case | median | variance | adversarial |${repeated ? ' pass rate |' : ''} status |`,
    `| --- | --- | --- | --- |${repeated ? ' --- |' : ''} --- |`,
    ...rows,
    '',
    ...(footer.length > 0 ? [...footer, ''] : []),
  ].join('\n');
}

/** Appends (the file collects every step's summary) and creates the folder if needed. */
export async function appendStepSummary(path: string, outcomes: RepeatedOutcome[], figures: RunFigures): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await appendFile(path, summaryMarkdown(outcomes, figures), 'utf8');
}
