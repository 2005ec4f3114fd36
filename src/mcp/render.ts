import { explainLine, lessonLine, tierPolicyLine } from '../core/recall-explain.js';
import type {
  AnalyzeFailuresResponse, ComposeResponse, EvaluateResponse, FeedbackResponse,
} from '../contracts/llm.js';
import type { EvaluationRun, RunDetailResponse, RunListResponse } from '../contracts/evaluations.js';
import type {
  DeletePatternResponse, LearnResponse, MetricsResponse, OutcomeResponse, RecallResponse, SkillsSearchResponse,
} from '../contracts/memory.js';

/**
 * Short text renderings of tool results. The structured content carries everything; the text
 * is what a model reads first, so it shows the top few items with the fields that decide what
 * to do next (tier, similarity, code) and stays small.
 */

const TOP_MATCHES = 3;
const CODE_CHARS = 2_000;
const LINE_CHARS = 120;

function oneLine(text: string, max = LINE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function codeBlock(code: string): string {
  const cut = code.length > CODE_CHARS ? `${code.slice(0, CODE_CHARS)}\n… (${code.length - CODE_CHARS} more characters in the structured result)` : code;
  return '```\n' + cut + '\n```';
}

const fixed = (n: number | null, digits = 2): string => (n === null ? 'n/a' : n.toFixed(digits));

export function renderRecall(res: RecallResponse): string {
  if (res.matches.length === 0) return 'no matches: nothing similar is stored yet';
  const shown = res.matches.slice(0, TOP_MATCHES);
  const lines = [`${res.matches.length} match${res.matches.length === 1 ? '' : 'es'}${res.matches.length > shown.length ? ` (top ${shown.length} shown)` : ''}:`];
  shown.forEach((m, i) => {
    lines.push(
      `${i + 1}. ${m.reuse_tier} · similarity ${m.similarity.toFixed(3)} · success ${m.pattern.success_score.toFixed(1)} · ${m.pattern_key}`,
      `   task: ${oneLine(m.pattern.task)}`,
    );
    if (m.explain) lines.push(`   explain: ${explainLine(m.explain)}`);
    // Reported failures on similar asks: read before reusing (docs/behavior.md "Outcome ranking").
    for (const l of m.lessons ?? []) lines.push(`   lesson: ${lessonLine(l)}`);
    lines.push(codeBlock(m.pattern.code));
  });
  // Older servers answer no id.
  if (res.recall_id) lines.push(`recall_id: ${res.recall_id} (after reusing a match, report how it went with report_outcome)`);
  if (res.tier_policy) lines.push(`tier policy: ${tierPolicyLine(res.tier_policy)}`);
  if (res.has_more && res.next_offset !== null) lines.push(`more matches: offset ${res.next_offset}`);
  return lines.join('\n');
}

export function renderOutcome(res: OutcomeResponse): string {
  return `${res.replaced ? 'replaced the earlier report' : 'recorded'}: ${res.pattern_key} ${res.passed ? 'passed' : 'failed'} for recall ${res.recall_id}`;
}

export function renderLearn(res: LearnResponse): string {
  const what = res.stored ? `stored${res.pattern_key ? ` as ${res.pattern_key}` : ''}` : 'not stored';
  return `${what}; ${res.pattern_count} patterns in this project${res.redacted ? '; secrets were redacted before storing' : ''}`;
}

export function renderEvaluate(res: EvaluateResponse): string {
  const lines = [
    `median score ${res.median_score.toFixed(1)}/10 from ${res.scores.length} judge${res.scores.length === 1 ? '' : 's'} (variance ${res.variance.toFixed(2)}${res.high_variance ? ', judges disagree' : ''})`,
  ];
  if (res.adversarial_detected) lines.push('warning: the output looks faked or hard-coded');
  if (res.failed_evaluators > 0) lines.push(`${res.failed_evaluators} judge(s) failed`);
  if (res.feedback) lines.push(`feedback: ${res.feedback}`);
  return lines.join('\n');
}

export function renderCompose(res: ComposeResponse): string {
  const lines = [`${res.stages.length} stage${res.stages.length === 1 ? '' : 's'}; ${res.valid ? 'stages connect' : `contract errors: ${res.contract_errors.join('; ')}`}`];
  res.stages.forEach((s, i) => {
    lines.push(`${i + 1}. ${s.name} · ${s.reuse_tier} · similarity ${s.similarity.toFixed(3)}${s.pattern_key ? ` · ${s.pattern_key}` : ''}: ${oneLine(s.task)}`);
  });
  return lines.join('\n');
}

export function renderFeedback(res: FeedbackResponse): string {
  if (res.feedback.length === 0) return 'no recurring feedback recorded';
  const lines = res.feedback.map((f) => `- (${f.count}×) ${oneLine(f.text, 200)}`);
  if (res.has_more && res.next_offset !== null) lines.push(`more: offset ${res.next_offset}`);
  return lines.join('\n');
}

export function renderAnalyzeFailures(res: AnalyzeFailuresResponse): string {
  if (res.clusters.length === 0) return 'no failure clusters';
  return res.clusters
    .map((c, i) => `${i + 1}. ${c.total_count} failure(s), average score ${c.avg_score.toFixed(1)}: ${oneLine(c.representative)}`)
    .join('\n');
}

export function renderDelete(res: DeletePatternResponse): string {
  return `deleted ${res.pattern_key}`;
}

export function renderMetrics(res: MetricsResponse): string {
  return [
    `runs: ${res.runs}`,
    `success rate: ${fixed(res.success_rate)}`,
    `average eval score: ${fixed(res.avg_eval_score)}`,
    `patterns: ${res.pattern_count}`,
    `reuse rate: ${fixed(res.reuse_rate)}`,
  ].join('\n');
}

export function renderSkillsRegister(res: { pattern_key: string; skills: string[] }): string {
  return `${res.pattern_key} skills: ${res.skills.join(', ') || '(none)'}`;
}

export function renderSkillsSearch(res: SkillsSearchResponse): string {
  if (res.matches.length === 0) return 'no patterns with those skills';
  const shown = res.matches.slice(0, TOP_MATCHES);
  const lines = [`${res.count} pattern${res.count === 1 ? '' : 's'}${res.count > shown.length ? ` (top ${shown.length} shown)` : ''}:`];
  shown.forEach((m, i) => {
    lines.push(`${i + 1}. ${m.pattern_key} [${m.skills.join(', ')}] · success ${m.pattern.success_score.toFixed(1)}`, `   task: ${oneLine(m.pattern.task)}`, codeBlock(m.pattern.code));
  });
  return lines.join('\n');
}

function runLine(r: EvaluationRun): string {
  const rate = r.summary.pass_rate === null ? '-' : `${Math.round(r.summary.pass_rate * 100)}%`;
  const where = [r.label, r.git.branch, r.git.commit?.slice(0, 12)].filter((x) => x).join(' ');
  const vs = r.comparison ? `; vs baseline: ${r.comparison.regressed} regressed, ${r.comparison.missing} missing, ${r.comparison.improved} improved` : '';
  return `- ${r.id} ${r.created_at} ${r.status}${where ? ` (${where})` : ''}: ${r.summary.passed}/${r.summary.cases} passed (${rate})${r.blessed ? ', baseline' : ''}${vs}`;
}

export function renderEvaluationRuns(res: RunListResponse): string {
  if (res.runs.length === 0) return 'no evaluation runs recorded';
  return res.runs.map(runLine).join('\n');
}

export function renderEvaluationRun(res: RunDetailResponse): string {
  const lines = [runLine(res.run).slice(2)];
  for (const c of res.cases.slice(0, 20)) {
    const score = c.median === null ? 'no score' : `median ${c.median}`;
    const why = c.passed ? 'passed' : `failed: ${oneLine(c.gate_failures.join('; ') || (c.error ?? ''), 100)}`;
    const feedback = c.evaluators.map((e) => e.feedback).find((f) => f.trim() !== '');
    lines.push(`- ${oneLine(c.name, 60)}: ${score}, ${why}${feedback ? ` | ${oneLine(feedback, 120)}` : ''}`);
  }
  if (res.cases.length > 20) lines.push(`(${res.cases.length - 20} more cases)`);
  return lines.join('\n');
}
