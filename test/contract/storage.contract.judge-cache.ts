/** Storage contract, judge cache: per-project verdicts by key, replaced on put, deleted with their project. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { CachedJudgement } from '../../src/core/judge-cache-key.js';
import type { Storage } from '../../src/ports/storage.js';
import { at, SCOPE_A, SCOPE_B, SCOPE_C } from './storage.contract.fixtures.js';

function judgement(overall: number, over: Partial<CachedJudgement> = {}): CachedJudgement {
  return {
    scores: [{ task_alignment: overall, code_quality: overall, workspace_usage: overall, robustness: overall, overall, feedback: `score ${overall}: name the helper`, hardcoded: false }],
    tokens: { input: 120, output: 30 },
    created_at: at(1),
    ...over,
  };
}

export function judgeCacheContract(current: () => Storage): void {
  let storage: Storage;
  beforeEach(() => {
    storage = current();
  });

  describe('judgeCache', () => {
    it('answers null for an unknown key, then the stored verdict as it was put', async () => {
      expect(await storage.judgeCache.get(SCOPE_A, 'k1')).toBeNull();
      await storage.judgeCache.put(SCOPE_A, 'k1', judgement(7));
      expect(await storage.judgeCache.get(SCOPE_A, 'k1')).toEqual(judgement(7));
      expect(await storage.judgeCache.get(SCOPE_A, 'k2')).toBeNull();
    });

    it('replaces the verdict of a key that is put again', async () => {
      await storage.judgeCache.put(SCOPE_A, 'k1', judgement(7));
      await storage.judgeCache.put(SCOPE_A, 'k1', judgement(3, { tokens: { input: 5, output: 6 } }));
      expect(await storage.judgeCache.get(SCOPE_A, 'k1')).toEqual(judgement(3, { tokens: { input: 5, output: 6 } }));
    });

    it('keeps every project\'s verdicts apart', async () => {
      await storage.judgeCache.put(SCOPE_A, 'k1', judgement(7));
      expect(await storage.judgeCache.get(SCOPE_B, 'k1')).toBeNull();
      expect(await storage.judgeCache.get(SCOPE_C, 'k1')).toBeNull();
      await storage.judgeCache.put(SCOPE_B, 'k1', judgement(2));
      expect((await storage.judgeCache.get(SCOPE_A, 'k1'))?.scores[0].overall).toBe(7);
      expect((await storage.judgeCache.get(SCOPE_B, 'k1'))?.scores[0].overall).toBe(2);
    });

    it('a governance deletion of a project removes its verdicts and leaves the other projects\'', async () => {
      await storage.judgeCache.put(SCOPE_A, 'k1', judgement(7));
      await storage.judgeCache.put(SCOPE_B, 'k1', judgement(2));
      await storage.governance.deleteScope({ ...SCOPE_A }, { at: at(2), keepRunningOperations: [] });
      expect(await storage.judgeCache.get(SCOPE_A, 'k1')).toBeNull();
      expect(await storage.judgeCache.get(SCOPE_B, 'k1')).not.toBeNull();
    });
  });
}
