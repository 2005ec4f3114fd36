import { createHash } from 'node:crypto';
import { judgeKeyMaterial, type CachedJudgement, type JudgeConfig } from '../core/judge-cache-key.js';
import type { Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';

/**
 * The judge cache's reads and writes for evaluate (docs/behavior.md "Judge cache"). The cache
 * only saves money: a store that fails to read or write it is logged and the case is judged
 * (or its verdict left uncached) as if there were no cache, never failed for it.
 */

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The cache key of one judging: hash of the text and judge configuration (core/judge-cache-key.ts). */
export function judgeCacheKey(text: { task?: string; code: string; output?: string }, judge: JudgeConfig, sample: number): string {
  // Absent and empty are different inputs: the prompt says "(no task description was given)".
  const hashOf = (value: string | undefined) => (value === undefined ? 'absent' : sha256(value));
  return sha256(judgeKeyMaterial({ task_hash: hashOf(text.task), code_hash: sha256(text.code), output_hash: hashOf(text.output) }, judge, sample));
}

export async function readCachedJudgement(deps: ServiceDeps, scope: Scope, key: string): Promise<CachedJudgement | null> {
  try {
    const found = await deps.storage.judgeCache.get(scope, key);
    return found && found.scores.length > 0 ? found : null;
  } catch (err) {
    deps.logger.warn({ err }, 'judge cache read failed; judging the case');
    return null;
  }
}

export async function writeCachedJudgement(deps: ServiceDeps, scope: Scope, key: string, judgement: CachedJudgement): Promise<void> {
  try {
    await deps.storage.judgeCache.put(scope, key, judgement);
  } catch (err) {
    deps.logger.warn({ err }, 'judge cache write failed; the verdict stays uncached');
  }
}
