import type { DuplicateCheck } from '../contracts/memory.js';
import type { PatternRecord } from '../core/types.js';
import type { ServiceDeps } from './deps.js';
import { FENCE_RULE, VERIFY_CODE_CHARS as CODE_CHARS, extractJson, fence } from './llm-support.js';

/**
 * The same second opinion on learn (opt-in `verify_duplicates: true`): before a run is merged
 * into a near-identical stored pattern, the LLM says whether both solve the same job. Word
 * overlap alone merges "convert Markdown to HTML" into "convert HTML to Markdown"; a verdict of
 * "different" keeps them two patterns. A failed or unreadable check merges as without it.
 */
export interface DuplicateCheckOutcome {
  /** null when the LLM failed or its answer could not be read. */
  check: DuplicateCheck | null;
  warning?: string;
}


const SYSTEM =
  'You decide whether two programming runs do the same job, so that one can replace the other in a library of ' +
  'reusable solutions. "same" means the new run solves the same task as the stored one (only wording or code ' +
  'quality differ); "different" means they do different jobs, even when the task descriptions share words. ' +
  FENCE_RULE + ' Reply with a JSON object only: {"verdict": "same" or "different", "reason": "one short sentence"}.';

export async function checkSameJob(
  deps: ServiceDeps,
  run: { task: string; code: string },
  stored: PatternRecord,
): Promise<DuplicateCheckOutcome> {
  const llm = deps.llm;
  if (!llm) throw new Error('checkSameJob called without an LLM (assertCanVerify first)');
  const prompt = [
    'Stored run:', fence('stored_task', stored.task), fence('stored_code', clip(stored.code)),
    'New run:', fence('task', run.task), fence('code', clip(run.code)),
    'Do the two runs do the same job?',
  ].join('\n');
  let text: string;
  try {
    ({ text } = await llm.complete({ system: SYSTEM, prompt, temperature: 0, maxTokens: 200, json: true }));
  } catch (err) {
    deps.logger.warn({ err }, 'duplicate check: LLM call failed; merging as without the check');
    deps.instruments.verification?.({ kind: 'call', outcome: 'error' });
    return { check: null, warning: 'duplicate check failed (the LLM did not answer); merged by similarity alone' };
  }
  const value = extractJson(text) as { verdict?: unknown; reason?: unknown } | undefined;
  const verdict = value && typeof value === 'object' ? value.verdict : undefined;
  if (verdict !== 'same' && verdict !== 'different') {
    deps.logger.warn({ reply_chars: text.length }, 'duplicate check: unreadable LLM answer');
    deps.instruments.verification?.({ kind: 'call', outcome: 'unparsable' });
    return { check: null, warning: 'duplicate check failed (the LLM answer could not be read); merged by similarity alone' };
  }
  deps.instruments.verification?.({ kind: 'call', outcome: 'ok' });
  deps.instruments.verification?.({ kind: 'verdict', verdict });
  const reason = typeof value!.reason === 'string' ? value!.reason.slice(0, 500) : '';
  return { check: { verdict, reason, model: llm.model } };
}

function clip(code: string): string {
  return code.length <= CODE_CHARS ? code : `${code.slice(0, CODE_CHARS)}\n… (${code.length - CODE_CHARS} more characters not shown)`;
}
