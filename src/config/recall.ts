import { DEFAULT_CODE_WEIGHT } from '../core/bm25.js';
import { DEFAULT_VECTOR_WEIGHT } from '../core/hybrid.js';
import { DEFAULT_REMOVED_VECTOR_WEIGHT, REMOVED_COMPONENTS } from '../core/components.js';
import { DEFAULT_NGRAM_WEIGHT } from '../core/ngrams.js';
import { bool, ConfigError, num, oneOf, optionalNum, str, type Env } from './env-readers.js';

/** How recall ranks and verifies, and the similarity thresholds that depend on the model. */
export interface RecallSettings {
  /**
   * SERVICE_TIER_DUPLICATE / SERVICE_TIER_ADAPT when set, else null: the thresholds in force
   * are resolved at startup (env → model folder → built-in → spec; see adapters/embeddings/model-tiers.ts).
   */
  tiers: { duplicate: number | null; adapt: number | null; policy: 'fixed' | 'calibrated' | null };
  /**
   * (+) Recall ranking (docs/behavior.md "Recall" 2): SERVICE_RECALL_RANKING `hybrid` (default:
   * centred cosine blended with BM25) or `cosine` (cosine alone), and
   * SERVICE_RECALL_VECTOR_WEIGHT, the vector side's share of the blend, and
   * SERVICE_RECALL_CODE_WEIGHT, the code field's weight in the keyword side's BM25F (0: task only),
   * SERVICE_RECALL_REMOVED_COMPONENTS, the project's principal directions removed from the vector
   * side (0: none), and SERVICE_RECALL_REMOVED_VECTOR_WEIGHT, the vector weight that goes with
   * their removal (SERVICE_RECALL_VECTOR_WEIGHT applies without it), and
   * SERVICE_RECALL_NGRAM_WEIGHT, the character n-gram side score's weight (0: off).
   */
  ranking: {
    mode: 'hybrid' | 'cosine'; vectorWeight: number; codeWeight: number; removedComponents: number; removedVectorWeight: number; ngramWeight: number;
  };
  /** (+) Verified reuse: SERVICE_RECALL_VERIFY (recall's default for `verify`), SERVICE_RECALL_VERIFY_MAX. */
  verify: { enabled: boolean; max: number };
  /** (+) Cosine at which analyze-failures joins two issues; model-dependent like the tiers. */
  failureClusterThreshold: number;
  /** (+) SERVICE_OUTCOME_RANKING: reported outcomes adjust the ranking (docs/behavior.md "Outcome ranking"). */
  outcomeRanking: boolean;
}

export function recallSettings(env: Env): RecallSettings {
  const duplicate = optionalNum(env, 'SERVICE_TIER_DUPLICATE', { min: 0, max: 1 });
  const adapt = optionalNum(env, 'SERVICE_TIER_ADAPT', { min: 0, max: 1 });
  if (adapt !== null && duplicate !== null && adapt > duplicate) throw new ConfigError('SERVICE_TIER_ADAPT', `must not exceed SERVICE_TIER_DUPLICATE (${duplicate})`);
  return {
    tiers: { duplicate, adapt, policy: str(env, 'SERVICE_TIER_POLICY') === null ? null : oneOf(env, 'SERVICE_TIER_POLICY', ['fixed', 'calibrated'] as const, 'fixed') },
    ranking: {
      mode: oneOf(env, 'SERVICE_RECALL_RANKING', ['hybrid', 'cosine'] as const, 'hybrid'),
      vectorWeight: num(env, 'SERVICE_RECALL_VECTOR_WEIGHT', DEFAULT_VECTOR_WEIGHT, { min: 0, max: 1 }),
      codeWeight: num(env, 'SERVICE_RECALL_CODE_WEIGHT', DEFAULT_CODE_WEIGHT, { min: 0, max: 10 }),
      removedComponents: num(env, 'SERVICE_RECALL_REMOVED_COMPONENTS', REMOVED_COMPONENTS, { min: 0, max: 8, int: true }),
      removedVectorWeight: num(env, 'SERVICE_RECALL_REMOVED_VECTOR_WEIGHT', DEFAULT_REMOVED_VECTOR_WEIGHT, { min: 0, max: 1 }),
      ngramWeight: num(env, 'SERVICE_RECALL_NGRAM_WEIGHT', DEFAULT_NGRAM_WEIGHT, { min: 0, max: 1 }),
    },
    verify: {
      enabled: bool(env, 'SERVICE_RECALL_VERIFY', false),
      max: num(env, 'SERVICE_RECALL_VERIFY_MAX', 5, { min: 1, max: 50, int: true }),
    },
    failureClusterThreshold: num(env, 'SERVICE_FAILURE_CLUSTER_THRESHOLD', 0.8, { min: 0, max: 1 }),
    outcomeRanking: oneOf(env, 'SERVICE_OUTCOME_RANKING', ['on', 'off'] as const, 'on') === 'on',
  };
}
