import { centeringApplies, type ProjectRecallStats } from '../core/hybrid.js';
import { failedOnThisWording, outcomeAdjustments, type OutcomeAdjustment, type OutcomeQuery } from '../core/outcome-ranking.js';
import { normalizeWording } from '../core/recall-trace.js';
import type { TierDecision } from '../core/tier-policy.js';
import type { Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';

/**
 * Recall's outcome stage (docs/behavior.md "Outcome ranking"): reads the reported outcomes of
 * the candidates and hands ranking each one's adjustment, before dedup. One per recall; the
 * evidence of a candidate is read once however often the search widens. A scope with no
 * outcomes (or SERVICE_OUTCOME_RANKING=off) gets no stage at all: one cheap check, no reads.
 */
export class OutcomeStage {
  /** The outcome part of every candidate that has evidence. */
  readonly parts = new Map<string, OutcomeAdjustment>();
  private readonly read = new Set<string>();
  private readonly scores = new Map<string, number>();

  private constructor(
    private readonly deps: ServiceDeps,
    private readonly scope: Scope,
    private readonly normalized: string,
  ) {}

  /** The stage for this recall, or null when outcomes cannot move it. */
  static async open(deps: ServiceDeps, scope: Scope, task: string): Promise<OutcomeStage | null> {
    if (!deps.config.recall.outcomeRanking) return null;
    if (!(await deps.storage.outcomes.hasAny(scope))) return null;
    return new OutcomeStage(deps, scope, normalizeWording(task));
  }

  /**
   * The adjustments of `ids` (ranking's `outcome` option). `vector`: the query vector recall
   * ranks with; `stats`: the project's mean figures when the ranking centres its cosines.
   */
  async adjust(ids: readonly string[], vector: Float32Array | null, stats: ProjectRecallStats | null): Promise<ReadonlyMap<string, number>> {
    const unread = ids.filter((id) => !this.read.has(id));
    if (unread.length > 0) {
      for (const id of unread) this.read.add(id);
      const evidence = await this.deps.storage.outcomes.evidenceFor(this.scope, unread);
      if (evidence.size > 0) {
        const query: OutcomeQuery = {
          normalized: this.normalized,
          vector,
          centring: stats && centeringApplies(stats) ? { queryMeanDot: stats.query_mean_dot!, meanNorm2: stats.mean_norm2! } : null,
        };
        for (const [id, part] of outcomeAdjustments(query, evidence, undefined, this.deps.queryDots)) {
          this.parts.set(id, part);
          this.scores.set(id, part.adjustment);
        }
      }
    }
    return this.scores;
  }

  /** The tier rule's decision, unless this exact wording's last outcome with the pattern failed: then never `duplicate`. */
  capTier(id: string, d: TierDecision): TierDecision {
    if (d.tier !== 'duplicate' || !failedOnThisWording(this.parts.get(id))) return d;
    return { ...d, tier: 'adapt', rule: 'failed_on_this_wording' };
  }
}
