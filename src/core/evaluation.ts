import { median, populationVariance } from './stats.js';

/** One evaluator's verdict, already validated and clamped. */
export interface EvaluatorScore {
  task_alignment: number;
  code_quality: number;
  workspace_usage: number;
  robustness: number;
  overall: number;
  feedback: string;
  hardcoded: boolean;
}

export interface AggregatedEvaluation {
  median_score: number;
  variance: number;
  high_variance: boolean;
  feedback: string;
  adversarial_detected: boolean;
}

/** Evaluators disagreeing more than this (population variance of `overall`) is flagged. */
export const HIGH_VARIANCE_THRESHOLD = 1.5;
/** Output lines shorter than this are too common ("OK", "done") to prove anything. */
export const MIN_STATIC_LINE_LENGTH = 8;

/**
 * A model's score as a number in [0, 10], or null when it is not a number at all (the
 * caller then treats the reply as malformed and retries). Numeric strings are accepted
 * because models sometimes quote numbers; out-of-range values are clamped, not rejected.
 */
export function clampScore(x: unknown): number | null {
  let n: number;
  if (typeof x === 'number') n = x;
  else if (typeof x === 'string' && x.trim() !== '') n = Number(x.trim());
  else return null;
  if (!Number.isFinite(n)) return null;
  return Math.max(0, Math.min(10, n));
}

const SCORE_FIELDS = ['task_alignment', 'code_quality', 'workspace_usage', 'robustness', 'overall'] as const;

/**
 * Turn one parsed JSON reply into an EvaluatorScore, or null when it lacks the shape
 * (any score missing or non-numeric, or the reply is not an object). `feedback` defaults
 * to "" and `hardcoded` to false only when absent; a wrongly typed `hardcoded` is malformed.
 */
export function toEvaluatorScore(reply: unknown): EvaluatorScore | null {
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) return null;
  const r = reply as Record<string, unknown>;
  const scores: Partial<Record<(typeof SCORE_FIELDS)[number], number>> = {};
  for (const field of SCORE_FIELDS) {
    const value = clampScore(r[field]);
    if (value === null) return null;
    scores[field] = value;
  }
  if (r.feedback !== undefined && typeof r.feedback !== 'string') return null;
  if (r.hardcoded !== undefined && typeof r.hardcoded !== 'boolean') return null;
  return {
    ...(scores as Record<(typeof SCORE_FIELDS)[number], number>),
    feedback: typeof r.feedback === 'string' ? r.feedback.trim() : '',
    hardcoded: r.hardcoded === true,
  };
}

/**
 * Contents of every string literal in source code: '…', "…", `…` and Python-style triple
 * quotes. Each literal yields its raw text and its unescaped text, so an output line
 * `say "hi"` matches the literal "say \"hi\"". Single and double quoted literals end at a
 * newline, which keeps an apostrophe in a comment (don't) from swallowing the file.
 * Quoted text inside comments counts too: telling comments from code needs the language.
 */
export function stringLiterals(code: string): string[] {
  const found: string[] = [];
  let i = 0;
  while (i < code.length) {
    const quote = code[i];
    if (quote !== '"' && quote !== "'" && quote !== '`') {
      i++;
      continue;
    }
    const triple = quote !== '`' && code.startsWith(quote.repeat(3), i);
    const closer = triple ? quote.repeat(3) : quote;
    const multiline = triple || quote === '`';
    let j = i + closer.length;
    let closedAt = -1;
    while (j < code.length) {
      const c = code[j];
      if (c === '\\') {
        j += 2;
        continue;
      }
      if (c === '\n' && !multiline) break;
      if (code.startsWith(closer, j)) {
        closedAt = j;
        break;
      }
      j++;
    }
    if (closedAt === -1) {
      // Unterminated: not a literal; resume right after the stray quote.
      i++;
      continue;
    }
    const raw = code.slice(i + closer.length, closedAt);
    found.push(raw);
    const unescaped = unescape(raw);
    if (unescaped !== raw) found.push(unescaped);
    i = closedAt + closer.length;
  }
  return found;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0' };

function unescape(raw: string): string {
  return raw.replace(/\\(.)/gs, (_, c: string) => ESCAPES[c] ?? c);
}

/**
 * The static half of adversarial detection: does a non-trivial output line (trimmed,
 * ≥ 8 characters) appear verbatim inside a string literal of the code? Printing a
 * literal that equals the expected output is the signature of a faked result.
 */
export function staticHardcodedCheck(code: string, output: string | null | undefined): boolean {
  if (!output) return false;
  const lines = new Set(
    output
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line.length >= MIN_STATIC_LINE_LENGTH),
  );
  if (lines.size === 0) return false;
  // One haystack instead of lines × literals comparisons. Joining with "\n" cannot create a
  // false match across two literals: an output line never contains a newline.
  const haystack = stringLiterals(code).join('\n');
  for (const line of lines) if (haystack.includes(line)) return true;
  return false;
}

/**
 * Distinct feedback sentences, lowest `overall` first (the harshest critique leads, since it
 * is usually the most actionable). Distinct ignores case and runs of whitespace; the first
 * spelling seen is kept. Ties keep the evaluators' order.
 */
export function distinctFeedback(scores: readonly EvaluatorScore[]): string[] {
  const ordered = scores
    .map((s, index) => ({ s, index }))
    .sort((a, b) => a.s.overall - b.s.overall || a.index - b.index);
  const seen = new Set<string>();
  const sentences: string[] = [];
  for (const { s } of ordered) {
    const sentence = s.feedback.trim().replace(/\s+/g, ' ');
    const identity = sentence.toLowerCase();
    if (sentence === '' || seen.has(identity)) continue;
    seen.add(identity);
    sentences.push(sentence);
  }
  return sentences;
}

/**
 * Combine the evaluators that answered (docs/behavior.md "Evaluate"). Throws on an empty list:
 * "every evaluator failed" is the caller's 503, not a score of 0.
 */
export function aggregateEvaluations(scores: EvaluatorScore[], staticAdversarial: boolean): AggregatedEvaluation {
  if (scores.length === 0) throw new RangeError('aggregateEvaluations needs at least one evaluator score');
  const overall = scores.map((s) => s.overall);
  const variance = populationVariance(overall);
  const hardcodedVotes = scores.filter((s) => s.hardcoded).length;
  return {
    median_score: median(overall),
    variance,
    high_variance: variance > HIGH_VARIANCE_THRESHOLD,
    feedback: distinctFeedback(scores).join('\n'),
    // Strict majority: one of two evaluators is a tie, not a verdict.
    adversarial_detected: hardcodedVotes * 2 > scores.length || staticAdversarial,
  };
}
