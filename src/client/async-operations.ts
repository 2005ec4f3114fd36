import type { z } from 'zod';
import type { RollupResponse } from '../contracts/analytics.js';
import type { RetentionApplyResponse } from '../contracts/governance.js';
import type { ComposeResponse, EvaluateResponse, EvolveResponse, FeedbackDecayResponse } from '../contracts/llm.js';
import type { AgingResponse, ImportResponse } from '../contracts/memory.js';
import { routes, type RouteEntry } from '../contracts/routes.js';
import type { SchemaLoader } from './wire.js';

/**
 * The routes that accept `Prefer: respond-async`, by operation name (docs/behavior.md "Asynchronous execution").
 * @internal
 */
export const ASYNC_ROUTES: Record<AsyncOperation, RouteEntry> = {
  evaluate: routes.evaluate,
  compose: routes.compose,
  evolve: routes.evolve,
  aging: routes.aging,
  feedback_decay: routes.feedbackDecay,
  import: routes.importRecords,
  analytics_rollup: routes.computeRollup,
  retention_apply: routes.applyRetention,
};
export type AsyncOperation = keyof AsyncResults;

/** Their paths, from the route table. */
export const ASYNC_PATHS = Object.fromEntries(Object.entries(ASYNC_ROUTES).map(([operation, entry]) => [operation, entry.path])) as Record<AsyncOperation, string>;

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

/** The contract a result is checked with: the operation's response schema, loaded on first use. */
export function resultContract<O extends AsyncOperation>(schemas: SchemaLoader, operation: O): () => Promise<z.ZodType<AsyncResults[O]>> {
  return schemas.response(ASYNC_ROUTES[operation]) as () => Promise<z.ZodType<AsyncResults[O]>>;
}
