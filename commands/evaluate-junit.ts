import type { EvaluateResponse } from '../src/client/index.js';
import { formatNumber, formatUsd } from '../src/core/output-numbers.js';

/**
 * JUnit XML for `service evaluate --junit FILE`: one <testcase> per evaluated case, a
 * <failure> when a gate (--min-score, --fail-on-*) fails, an <error> when the case could not
 * be evaluated at all. CI systems (GitHub Actions, GitLab, Jenkins) render this format.
 */

export interface CaseOutcome {
  name: string;
  seconds: number;
  result: EvaluateResponse | null;
  /** Why the case fails its gates (empty = passed). */
  gateFailures: string[];
  /** Set when the case could not be evaluated. */
  error: { kind: string; message: string } | null;
  /** (+) Repeats, pass rate, cost and cache use (commands/evaluate-repeats.ts). */
  figures?: {
    repeats: number; pass_rate: number | null; flaky: boolean; tokens: { input: number; output: number };
    cost_usd: number | null; cache_hit: boolean; repeat_scores: number[];
  };
  /** (+) Why --max-cost left the case unjudged (a JUnit <skipped>). */
  notEvaluated?: string | null;
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

/** Scores as <properties>, so CI tools can chart them per case without parsing text. */
function properties(result: EvaluateResponse, figures: CaseOutcome['figures']): string {
  const props: [string, string | number | boolean][] = [
    ['median_score', result.median_score],
    ['variance', result.variance],
    ['high_variance', result.high_variance],
    ['adversarial_detected', result.adversarial_detected],
    ...result.scores.map((s, i): [string, number] => [`evaluator_${i + 1}_overall`, s.overall]),
  ];
  if (figures) {
    props.push(['repeats', figures.repeats]);
    if (figures.pass_rate !== null) props.push(['pass_rate', figures.pass_rate]);
    props.push(['flaky', figures.flaky], ['tokens_input', figures.tokens.input], ['tokens_output', figures.tokens.output]);
    props.push(['cost_usd', figures.cost_usd === null ? 'unknown' : formatUsd(figures.cost_usd)], ['cache_hit', figures.cache_hit]);
    if (figures.repeats > 1) props.push(['repeat_scores', figures.repeat_scores.map(formatNumber).join(' ')]);
  }
  return [
    '      <properties>',
    ...props.map(([name, value]) => `        <property ${attr('name', name)} ${attr('value', typeof value === 'number' ? formatNumber(value) : String(value))}/>`),
    '      </properties>',
  ].join('\n');
}

function testcase(outcome: CaseOutcome): string {
  const open = `    <testcase ${attr('name', outcome.name)} ${attr('classname', 'service.evaluate')} ${attr('time', secs(outcome.seconds))}`;
  const body: string[] = [];
  if (outcome.result) body.push(properties(outcome.result, outcome.figures));
  if (outcome.notEvaluated) {
    body.push(`      <skipped ${attr('message', `not evaluated: ${outcome.notEvaluated}`)}/>`);
  } else if (outcome.error) {
    body.push(`      <error ${attr('message', outcome.error.message)} ${attr('type', outcome.error.kind)}>${xmlEscape(outcome.error.message)}</error>`);
  } else if (outcome.gateFailures.length > 0) {
    const message = outcome.gateFailures.join('; ');
    const text = outcome.result ? `${message}\n\n${details(outcome.result)}` : message;
    body.push(`      <failure ${attr('message', message)} ${attr('type', 'quality-gate')}>${xmlEscape(text)}</failure>`);
  }
  if (outcome.result) body.push(`      <system-out>${xmlEscape(details(outcome.result))}</system-out>`);
  return body.length === 0 ? `${open}/>` : `${open}>\n${body.join('\n')}\n    </testcase>`;
}

export function junitXml(outcomes: CaseOutcome[], timestamp: Date): string {
  const skipped = outcomes.filter((o) => o.notEvaluated).length;
  const failures = outcomes.filter((o) => !o.notEvaluated && !o.error && o.gateFailures.length > 0).length;
  const errors = outcomes.filter((o) => !o.notEvaluated && o.error).length;
  const time = secs(outcomes.reduce((sum, o) => sum + o.seconds, 0));
  const counts = `${attr('tests', outcomes.length)} ${attr('failures', failures)} ${attr('errors', errors)}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites ${attr('name', 'service evaluate')} ${counts} ${attr('time', time)}>`,
    `  <testsuite ${attr('name', 'service evaluate')} ${counts} ${attr('skipped', skipped)} ${attr('time', time)} ${attr('timestamp', timestamp.toISOString().replace(/\.\d+Z$/, ''))}>`,
    ...outcomes.map(testcase),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
