import { distinctTerms } from '../../src/core/bm25.js';
import { firstFetch } from '../../src/core/dedup.js';
import { unitVector } from '../../src/core/hybrid.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { OutcomeStage } from '../../src/services/recall-outcomes.js';
import { keywordShare } from '../../src/services/recall-hybrid.js';
import { syntheticRuns } from '../synthetic.js';
import { ask, depsFor, openModel, openTempStore, SCOPE, VARIANTS } from '../recall-quality/protocol.js';

/**
 * The recall CPU outcome ranking adds (docs/behavior.md "Outcome ranking"), in process through
 * the recall service on one JSON store of `patterns` synthetic patterns: first with no outcome
 * in the project (the stage's cheap check alone), then after `outcomes` outcomes were reported
 * against recalls of similar synthetic asks (about one per recall's top match). Both arms,
 * with and without SERVICE_OUTCOME_RANKING, answer the same queries interleaved, so a shared
 * machine's load falls on both alike; the figure is the difference.
 */
export interface OutcomeCpu {
  /** CPU µs per recall without outcome ranking, and with it, once outcomes are stored. */
  withoutUs: number;
  withUs: number;
  /** With outcome ranking on a project with no outcome yet. */
  emptyWithUs: number;
  emptyWithoutUs: number;
  /** Outcomes actually stored (a report refused would leave the store emptier than asked). */
  stored: number;
  /**
   * The stage alone, timed on its own (its check, the evidence read and the adjustments of a
   * default recall's candidates), so the machine's noise in two whole recalls does not hide it.
   */
  stageUs: number;
  emptyStageUs: number;
}

const HYBRID = VARIANTS.find((v) => v.name === 'after')!;

export async function measureOutcomeCpu(modelPath: string, patterns: number, outcomes: number, queries: number): Promise<OutcomeCpu> {
  const model = await openModel(modelPath);
  const store = await openTempStore();
  try {
    const base = await depsFor(model.config, model.embedder, store.storage, HYBRID, modelPath);
    const arms: Record<'with' | 'without', ServiceDeps> = {
      with: { ...base, config: { ...base.config, recall: { ...base.config.recall, outcomeRanking: true } } },
      without: { ...base, config: { ...base.config, recall: { ...base.config.recall, outcomeRanking: false } } },
    };
    const runs = syntheticRuns(42, patterns + outcomes + queries);
    for (let i = 0; i < patterns; i += 256) {
      const batch = runs.slice(i, Math.min(patterns, i + 256));
      const vectors = await base.embedder.embed(batch.map((r) => r.task));
      for (const [j, r] of batch.entries()) {
        const id = `c${String(i + j).padStart(7, '0')}`;
        const now = new Date(Date.UTC(2026, 0, 1) + (i + j) * 1000).toISOString();
        await store.storage.patterns.insert(SCOPE, {
          id, task: r.task, code: r.code, output: null, eval_score: r.eval_score, success_score: r.eval_score, reuse_count: 0, run_id: null,
          classification: 'internal', source: 'api', author: null, expires_at: null, redacted: false, created_at: now, updated_at: now, last_aged_at: null,
        }, vectors[j]);
      }
    }
    const asks = runs.slice(patterns + outcomes).map((r) => r.task);
    await base.embedder.embed(asks); // cached: the cost below is ranking, not embedding
    for (const t of asks.slice(0, 20)) for (const d of Object.values(arms)) await ask(d, t); // warm-up (and the tier fit)
    const empty = await interleaved(arms, asks);
    const emptyStageUs = await stageCost(arms.with, asks);

    // Outcomes as an agent would report them: against the top match of a recall of a similar ask.
    const reporters = runs.slice(patterns, patterns + outcomes).map((r) => r.task);
    let stored = 0;
    for (const [i, task] of reporters.entries()) {
      const res = await ask(arms.without, task);
      const top = res.matches[0];
      if (!top) continue;
      await store.storage.settleRecallWrites();
      const passed = i % 3 === 0;
      const result = await store.storage.outcomes.report(SCOPE, {
        recall_id: res.recall_id, pattern_key: top.pattern_key, passed, score: null,
        detail: passed ? null : `assert case ${i} failed`, source: 'tests', at: new Date().toISOString(),
      });
      if (result === 'stored' || result === 'replaced') stored++;
    }
    const loaded = await interleaved(arms, asks);
    const stageUs = await stageCost(arms.with, asks);
    return { withUs: loaded.with, withoutUs: loaded.without, emptyWithUs: empty.with, emptyWithoutUs: empty.without, stored, stageUs, emptyStageUs };
  } finally {
    await store.remove();
    await model.embedder.close();
  }
}

/**
 * CPU µs per recall of each arm over the same asks, both arms on every ask, which goes first
 * alternating ask by ask (the second recall of a task finds warmer caches).
 */
async function interleaved(arms: Record<'with' | 'without', ServiceDeps>, asks: string[]): Promise<Record<'with' | 'without', number>> {
  const cpu = { with: 0, without: 0 };
  for (const [i, t] of asks.entries()) {
    for (const arm of i % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
      const before = process.cpuUsage();
      await ask(arms[arm], t);
      const used = process.cpuUsage(before);
      cpu[arm] += used.user + used.system;
    }
  }
  return { with: cpu.with / asks.length, without: cpu.without / asks.length };
}

/** CPU µs of the outcome stage per recall: a default recall's first candidate fetch (limit 5), gathered beforehand, then the stage timed alone. */
async function stageCost(deps: ServiceDeps, asks: string[]): Promise<number> {
  const k = firstFetch(5);
  const sets = [];
  for (const task of asks) {
    const unit = unitVector((await deps.embedder.embed([task]))[0]);
    const set = await deps.storage.patterns.hybridCandidates(SCOPE, { vector: unit, terms: distinctTerms(task), vectorK: k, keywordK: keywordShare(k), filter: {}, evalWindow: 0 });
    sets.push({ task, unit, set });
  }
  const before = process.cpuUsage();
  for (const { task, unit, set } of sets) {
    const stage = await OutcomeStage.open(deps, SCOPE, task);
    if (stage) await stage.adjust(set.candidates.map((c) => c.id), unit, set.stats);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / sets.length;
}
