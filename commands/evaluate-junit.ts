import type { CaseComparison, EvaluateResponse, RunCase } from '../src/client/index.js';
import { formatNumber } from '../src/core/output-numbers.js';
import type { FinishedRun } from './evaluate-run.js';

/**
 * JUnit XML for `service evaluate --junit FILE`: one <testcase> per evaluated case, a
 * <failure> when a gate (--min-score, --fail-on-*) fails or the case regressed against the
 * baseline, an <error> when the case could not be evaluated at all; a baseline case missing
 * from the run is a failed testcase of its own. The suite's <properties> carry the run (id,
 * status, pass rate, pass^k, flaky count). CI systems (GitHub Actions, GitLab, Jenkins) render
 * this format.
 */

export interface CaseOutcome {
  name: string;
  seconds: number;
  result: EvaluateResponse | null;
  /** Why the case fails its gates (empty = passed). */
  gateFailures: string[];
  /** Set when the case could not be evaluated. */
  error: { kind: string; message: string } | null;
  /** The case as its run recorded it (repeats, pass rate, flaky, cost), once the run is finished. */
  runCase?: RunCase | null;
}

// XML 1.0 allows tab, LF, CR and everything from U+0020 up except the surrogates and U+FFFE/F.
// eslint-disable-next-line no-control-regex
const INVALID_XML = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlEscape(text: string): string {
  return text
    .replace(INVALID_XML, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const attr = (name: string, value: string | number) => `${name}="${xmlEscape(String(value))}"`;
const secs = (s: number) => s.toFixed(3);

function details(result: EvaluateResponse): string {
  const lines = [
    `median_score: ${formatNumber(result.median_score)}`,
    `variance: ${formatNumber(result.variance)}`,
    `high_variance: ${result.high_variance}`,
    `adversarial_detected: ${result.adversarial_detected}`,
    ...result.scores.map((s, i) => `evaluator ${i + 1}: overall ${formatNumber(s.overall)} - ${s.feedback}`),
  ];
  if (result.feedback) lines.push('', 'feedback:', result.feedback);
  return lines.join('\n');
}

type Prop = [string, string | number | boolean];

/** What the run recorded of a case beyond the evaluate answer (absent fields are left out). */
function runCaseProps(c: RunCase | null | undefined): Prop[] {
  if (!c) return [];
  const props: Prop[] = [['case_id', c.case_id], ['repeats', c.repeats]];
  if (c.pass_rate !== null) props.push(['pass_rate', c.pass_rate]);
  if (c.flaky !== null) props.push(['flaky', c.flaky]);
  if (c.cost_usd !== null) props.push(['cost_usd', c.cost_usd]);
  if (c.cache_hit !== null) props.push(['cache_hit', c.cache_hit]);
  return props;
}

function propertyLines(props: Prop[], indent: string): string {
  return [
    `${indent}<properties>`,
    ...props.map(([name, value]) => `${indent}  <property ${attr('name', name)} ${attr('value', typeof value === 'number' ? formatNumber(value) : String(value))}/>`),
    `${indent}</properties>`,
  ].join('\n');
}

/** Scores as <properties>, so CI tools can chart them per case without parsing text. */
function properties(result: EvaluateResponse, runCase?: RunCase | null): string {
  return propertyLines([
    ['median_score', result.median_score],
    ['variance', result.variance],
    ['high_variance', result.high_variance],
    ['adversarial_detected', result.adversarial_detected],
    ...result.scores.map((s, i): Prop => [`evaluator_${i + 1}_overall`, s.overall]),
    ...runCaseProps(runCase),
  ], '      ');
}

function regressionMessage(change: CaseComparison): string {
  const from = change.baseline_median === null ? '-' : formatNumber(change.baseline_median);
  const to = change.median === null ? '-' : formatNumber(change.median);
  return `regressed against the baseline: median ${from} → ${to}`;
}

function testcase(outcome: CaseOutcome, change?: CaseComparison): string {
  const open = `    <testcase ${attr('name', outcome.name)} ${attr('classname', 'service.evaluate')} ${attr('time', secs(outcome.seconds))}`;
  const body: string[] = [];
  if (outcome.result) body.push(properties(outcome.result, outcome.runCase));
  if (outcome.error) {
    body.push(`      <error ${attr('message', outcome.error.message)} ${attr('type', outcome.error.kind)}>${xmlEscape(outcome.error.message)}</error>`);
  } else if (outcome.gateFailures.length > 0) {
    const message = outcome.gateFailures.join('; ');
    const text = outcome.result ? `${message}\n\n${details(outcome.result)}` : message;
    body.push(`      <failure ${attr('message', message)} ${attr('type', 'quality-gate')}>${xmlEscape(text)}</failure>`);
  } else if (change?.change === 'regressed') {
    const message = regressionMessage(change);
    body.push(`      <failure ${attr('message', message)} ${attr('type', 'regression')}>${xmlEscape(message)}</failure>`);
  }
  if (outcome.result) body.push(`      <system-out>${xmlEscape(details(outcome.result))}</system-out>`);
  return body.length === 0 ? `${open}/>` : `${open}>\n${body.join('\n')}\n    </testcase>`;
}

/** A baseline case this run lacks: a failed testcase, so CI shows it by name. */
function missingCase(change: CaseComparison): string {
  const message = 'missing: the baseline run has this case, this run does not';
  return [
    `    <testcase ${attr('name', change.name)} ${attr('classname', 'service.evaluate')} ${attr('time', secs(0))}>`,
    `      <failure ${attr('message', message)} ${attr('type', 'missing')}>${xmlEscape(message)}</failure>`,
    '    </testcase>',
  ].join('\n');
}

function suiteProperties(finished: FinishedRun): Prop[] {
  const { run, comparison } = finished;
  const s = run.summary;
  const props: Prop[] = [['run_id', run.id], ['status', run.status]];
  if (s.pass_rate !== null) props.push(['pass_rate', s.pass_rate]);
  if (s.pass_hat_k !== null) props.push(['pass_hat_k', s.pass_hat_k]);
  props.push(['flaky', s.flaky]);
  if (s.cost_usd !== null) props.push(['cost_usd', s.cost_usd]);
  props.push(['cache_hits', s.cache_hits], ['cache_misses', s.cache_misses]);
  if (comparison) {
    props.push(['baseline_id', comparison.baseline.id], ['regressed', comparison.counts.regressed], ['missing', comparison.counts.missing]);
    if (comparison.pass_rate_delta !== null) props.push(['pass_rate_delta', comparison.pass_rate_delta]);
  }
  return props;
}

export function junitXml(outcomes: CaseOutcome[], timestamp: Date, finished?: FinishedRun): string {
  const changes = new Map((finished?.comparison?.cases ?? []).map((c) => [c.case_id, c]));
  const changeOf = (o: CaseOutcome) => (o.runCase ? changes.get(o.runCase.case_id) : undefined);
  const missing = (finished?.comparison?.cases ?? []).filter((c) => c.change === 'missing');
  const regressedOnly = outcomes.filter((o) => !o.error && o.gateFailures.length === 0 && changeOf(o)?.change === 'regressed').length;
  const failures = outcomes.filter((o) => !o.error && o.gateFailures.length > 0).length + regressedOnly + missing.length;
  const errors = outcomes.filter((o) => o.error).length;
  const time = secs(outcomes.reduce((sum, o) => sum + o.seconds, 0));
  const counts = `${attr('tests', outcomes.length + missing.length)} ${attr('failures', failures)} ${attr('errors', errors)}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites ${attr('name', 'service evaluate')} ${counts} ${attr('time', time)}>`,
    `  <testsuite ${attr('name', 'service evaluate')} ${counts} ${attr('skipped', 0)} ${attr('time', time)} ${attr('timestamp', timestamp.toISOString().replace(/\.\d+Z$/, ''))}>`,
    ...(finished ? [propertyLines(suiteProperties(finished), '    ')] : []),
    ...outcomes.map((o) => testcase(o, changeOf(o))),
    ...missing.map(missingCase),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
