import type { z } from 'zod';
import type { RollupResponse } from '../contracts/analytics.js';
import type { RetentionApplyResponse } from '../contracts/governance.js';
import type { ComposeResponse, EvaluateResponse, EvolveResponse, FeedbackDecayResponse } from '../contracts/llm.js';
import type { AgingResponse, ImportResponse } from '../contracts/memory.js';

/** The endpoints that accept `Prefer: respond-async` (docs/behavior.md "Asynchronous execution"). */
export const ASYNC_PATHS = {
  evaluate: '/v1/evaluate',
  compose: '/v1/compose',
  evolve: '/v1/evolve',
  aging: '/v1/aging',
  feedback_decay: '/v1/feedback/decay',
  import: '/v1/import',
  analytics_rollup: '/v1/analytics/rollup',
  retention_apply: '/v1/governance/retention/apply',
} as const;
export type AsyncOperation = keyof typeof ASYNC_PATHS;

/** A completed job's result is the operation's synchronous answer. */
export interface AsyncResults {
  evaluate: EvaluateResponse;
  compose: ComposeResponse;
  evolve: EvolveResponse;
  aging: AgingResponse;
  feedback_decay: FeedbackDecayResponse;
  import: ImportResponse;
  analytics_rollup: RollupResponse;
  retention_apply: RetentionApplyResponse;
}
export type AsyncResult<O extends AsyncOperation> = AsyncResults[O];

/**
 * The contract each result is checked with, loaded on first use: the client's entry stays
 * free of zod (commands/registry.ts).
 */
export const RESULT_CONTRACTS: { [O in AsyncOperation]: () => Promise<z.ZodType<AsyncResults[O]>> } = {
  evaluate: async () => (await import('../contracts/llm.js')).EvaluateResponse,
  compose: async () => (await import('../contracts/llm.js')).ComposeResponse,
  evolve: async () => (await import('../contracts/llm.js')).EvolveResponse,
  aging: async () => (await import('../contracts/memory.js')).AgingResponse,
  feedback_decay: async () => (await import('../contracts/llm.js')).FeedbackDecayResponse,
  import: async () => (await import('../contracts/memory.js')).ImportResponse,
  analytics_rollup: async () => (await import('../contracts/analytics.js')).RollupResponse,
  retention_apply: async () => (await import('../contracts/governance.js')).RetentionApplyResponse,
};
