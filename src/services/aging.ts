import { agedScore, shouldPrune } from '../core/aging.js';
import type { AgingInput, AgingResponse } from '../contracts/memory.js';
import type { PatternRecord, Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';

/**
 * Decays every pattern of the scope by 0.98 per week since it was last aged (or created) and
 * prunes those below 0.1 (pattern, vector, eval observations and tags go with it). Each kept
 * pattern records `last_aged_at = now`, so a second run at the same time changes nothing and
 * any schedule of runs compounds to exactly 0.98^(weeks since creation). A dry run (+)
 * reports the same counts and writes nothing.
 */
export async function runAging(deps: ServiceDeps, scope: Scope, options: AgingInput = { dry_run: false }): Promise<AgingResponse> {
  const { storage, clock } = deps;
  const now = clock.now();
  const nowIso = now.toISOString();

  // Decide first, then write: mutating while the store streams pages could skip or repeat rows.
  const toUpdate: PatternRecord[] = [];
  const toPrune: string[] = [];
  for await (const pattern of storage.patterns.iterate(scope)) {
    const score = agedScore(pattern, now);
    if (shouldPrune(score)) toPrune.push(pattern.id);
    else if (score !== pattern.success_score) toUpdate.push({ ...pattern, success_score: score, last_aged_at: nowIso });
  }

  if (options.dry_run) {
    // The same decisions, reported instead of written.
    const total = await storage.patterns.count(scope);
    return { aged: toUpdate.length, pruned: toPrune.length, remaining: total - toPrune.length, dry_run: true };
  }

  let pruned = 0;
  for (const id of toPrune) if (await storage.patterns.delete(scope, id)) pruned++;
  let aged = 0;
  for (const pattern of toUpdate) if (await storage.patterns.update(scope, pattern)) aged++;

  if (pruned > 0 || aged > 0) deps.logger.info({ ...scope, aged, pruned }, 'patterns aged');
  return { aged, pruned, remaining: await storage.patterns.count(scope), dry_run: false };
}
