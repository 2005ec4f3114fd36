import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { CaseOutcome } from './evaluate-junit.js';
import { formatNumber } from '../src/core/output-numbers.js';

/**
 * The Markdown a CI job shows as its summary (GitHub Actions renders $GITHUB_STEP_SUMMARY):
 * a headline with the counts, then one table row per case.
 */
export function summaryMarkdown(outcomes: CaseOutcome[]): string {
  const passed = outcomes.filter((o) => !o.error && o.gateFailures.length === 0).length;
  const gated = outcomes.filter((o) => !o.error && o.gateFailures.length > 0).length;
  const errors = outcomes.filter((o) => o.error).length;
  const icon = errors > 0 || gated > 0 ? '❌' : '✅';
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
  const rows = outcomes.map((o) => {
    const r = o.result;
    const status = o.error ? `error: ${o.error.message}` : o.gateFailures.length > 0 ? `fail: ${o.gateFailures.join('; ')}` : 'pass';
    return `| ${cell(o.name)} | ${r ? formatNumber(r.median_score) : '-'} | ${r ? formatNumber(r.variance) : '-'} | ${r ? (r.adversarial_detected ? 'yes' : 'no') : '-'} | ${cell(status)} |`;
  });
  return [
    `### ${icon} service evaluate: ${passed} of ${outcomes.length} passed`,
    '',
    `${gated} failed the gate, ${errors} could not be evaluated.`,
    '',
    '| case | median | variance | adversarial | status |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

/** Appends (the file collects every step's summary) and creates the folder if needed. */
export async function appendStepSummary(path: string, outcomes: CaseOutcome[]): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await appendFile(path, summaryMarkdown(outcomes), 'utf8');
}
