import { DomainError, LlmNotConfiguredError, LlmUnavailableError } from '../core/errors.js';
import { clampScore } from '../core/evaluation.js';
import { recurringIssues } from '../core/feedback.js';
import { median } from '../core/stats.js';
import { tokenJaccard } from '../core/text.js';
import type { EvolveInput, EvolveResponse } from '../contracts/llm.js';
import type { Scope } from '../core/types.js';
import type { Llm } from '../ports/llm.js';
import type { ServiceDeps } from './deps.js';
import { askJson, fence, FENCE_RULE } from './llm-support.js';

interface Proposal {
  improved_prompt: string;
  changes: string[];
  issues_addressed: string[];
}

/** Judge samples per prompt; the medians are compared (docs/behavior.md "Evolve"). */
export const JUDGE_SAMPLES = 3;

export const PROPOSER_SYSTEM = [
  'You are a prompt engineer improving the system prompt of an AI agent so it stops repeating known quality issues.',
  FENCE_RULE,
  'Rewrite the prompt to address the numbered issues while keeping everything that already works.',
  'Reply with one JSON object only: {"improved_prompt": string, "changes": [string], ' +
    '"issues_addressed": [string, the exact text of each issue the new prompt addresses]}.',
].join('\n');

export const JUDGE_SYSTEM = [
  'You are a judge rating how well an agent system prompt prevents known quality issues.',
  FENCE_RULE,
  'Score the prompt from 0 to 10: 10 means following it reliably avoids every issue and keeps the role clear.',
  'Reply with one JSON object only: {"score": number}.',
].join('\n');

function numbered(issues: string[]): string {
  return issues.map((text, i) => `${i + 1}. ${text}`).join('\n');
}

function parseProposal(value: unknown): Proposal | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.improved_prompt !== 'string' || v.improved_prompt.trim() === '') return null;
  const strings = (x: unknown): string[] | null =>
    x === undefined ? [] : Array.isArray(x) && x.every((s) => typeof s === 'string') ? x : null;
  const changes = strings(v.changes);
  const addressed = strings(v.issues_addressed);
  if (changes === null || addressed === null) return null;
  return { improved_prompt: v.improved_prompt, changes, issues_addressed: addressed };
}

/**
 * Maps the model's "issues addressed" back to the real issue texts. A claim counts when it
 * names an issue by number ("2", "#2", or the word issue then the number), quotes it, or is worded close to it, so a
 * claim about an issue that was never raised addresses nothing.
 */
export function matchAddressed(claims: string[], issues: string[]): string[] {
  const found = new Set<number>();
  for (const claim of claims) {
    const text = claim.trim();
    const byNumber = /^(?:issue\s*)?#?(\d+)\.?$/i.exec(text);
    if (byNumber) {
      const index = Number(byNumber[1]) - 1;
      if (index >= 0 && index < issues.length) found.add(index);
      continue;
    }
    const lower = text.toLowerCase();
    issues.forEach((issue, i) => {
      const target = issue.toLowerCase();
      if (lower === target || lower.includes(target) || (lower.length >= 10 && target.includes(lower)) || tokenJaccard(text, issue) >= 0.5) {
        found.add(i);
      }
    });
  }
  return [...found].sort((a, b) => a - b).map((i) => issues[i]);
}

/** Median of JUDGE_SAMPLES independent judge scores of one prompt; failed samples are skipped. */
async function judge(llm: Llm, deps: ServiceDeps, role: string, prompt: string, issues: string[]): Promise<number> {
  const request = {
    system: JUDGE_SYSTEM,
    prompt: `${fence('role', role)}\n\n${fence('issues', numbered(issues))}\n\n${fence('prompt', prompt)}\n\nRate the prompt above.`,
    temperature: 0.7,
    maxTokens: 100,
    json: true,
  };
  const parse = (v: unknown) => (typeof v === 'object' && v !== null ? clampScore((v as { score?: unknown }).score) : null);
  const settled = await Promise.allSettled(
    Array.from({ length: JUDGE_SAMPLES }, () => askJson(llm, request, parse, { what: 'judge score', logger: deps.logger })),
  );
  const scores: number[] = [];
  for (const s of settled) {
    if (s.status === 'fulfilled') scores.push(s.value);
    else if (!(s.reason instanceof DomainError)) throw s.reason;
  }
  if (scores.length === 0) throw new LlmUnavailableError('every judge sample failed; the candidate prompt could not be checked');
  return median(scores);
}

const fmt = (x: number) => (Math.round(x * 100) / 100).toString();

/**
 * POST /v1/evolve (docs/behavior.md "Evolve"): propose a better prompt from the top recurring
 * issues, then accept it only if a blind judge (same rubric for both prompts, 3 samples each)
 * scores it at least as high as the current one and it addresses at least one real issue.
 */
export async function evolve(deps: ServiceDeps, scope: Scope, input: EvolveInput): Promise<EvolveResponse> {
  const { llm } = deps;
  if (!llm) throw new LlmNotConfiguredError();

  const issues = recurringIssues(await deps.storage.feedback.list(scope)).slice(0, input.num_issues).map((c) => c.text);
  if (issues.length === 0) {
    return {
      improved_prompt: input.current_prompt,
      changes: [],
      issues_addressed: [],
      accepted: false,
      reason: 'no recurring issues: the feedback store has no issue reported at least twice, so there is nothing to improve',
      current_score: null,
      candidate_score: null,
    };
  }

  const proposal = await askJson(
    llm,
    {
      system: PROPOSER_SYSTEM,
      prompt: `${fence('role', input.role)}\n\n${fence('prompt', input.current_prompt)}\n\n${fence('issues', numbered(issues))}\n\nImprove the prompt.`,
      temperature: 0.4,
      maxTokens: 2000,
      json: true,
    },
    parseProposal,
    { what: 'prompt proposal', logger: deps.logger },
  );
  const addressed = matchAddressed(proposal.issues_addressed, issues);

  const [currentScore, candidateScore] = await Promise.all([
    judge(llm, deps, input.role, input.current_prompt, issues),
    judge(llm, deps, input.role, proposal.improved_prompt, issues),
  ]);
  const scoresOk = candidateScore >= currentScore;
  const accepted = scoresOk && addressed.length > 0;
  const scoreText = `candidate scored ${fmt(candidateScore)} vs current ${fmt(currentScore)} (median of ${JUDGE_SAMPLES} judge samples each)`;
  const reason = accepted
    ? `accepted: ${scoreText} and it addresses ${addressed.length} of ${issues.length} recurring issues`
    : !scoresOk
      ? `rejected: ${scoreText}, lower than the current prompt`
      : `rejected: ${scoreText}, but it addresses none of the ${issues.length} recurring issues`;

  return {
    improved_prompt: proposal.improved_prompt,
    changes: proposal.changes,
    issues_addressed: addressed,
    accepted,
    reason,
    current_score: currentScore,
    candidate_score: candidateScore,
  };
}
