/**
 * The closed word lists and bounds that are both domain facts and wire facts. This file
 * imports nothing, so the zod contracts may use it without depending on the rest of core
 * (the layer rule allows contracts exactly this one core file).
 */

export const CLASSIFICATIONS = ['public', 'internal', 'confidential'] as const;

export const SOURCES = ['api', 'sdk', 'cli', 'import'] as const;

export const ROLES = ['reader', 'editor', 'admin', 'owner'] as const;

export const ROLLUP_WINDOWS = ['hourly', 'daily', 'weekly'] as const;

/** A background job's states: pending → running → completed | failed, and pending → cancelled. */
export const JOB_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;

/** Bounds of a retention setting, in days (about a hundred years at most). */
export const MIN_RETENTION_DAYS = 1;
export const MAX_RETENTION_DAYS = 36_500;

/**
 * Stable, machine-readable error codes carried by every error body as `code`. Clients branch
 * on these, never on message text; a status can carry several codes (503: maintenance,
 * storage, LLM, embedding), so the code is the finer and the stabler of the two.
 */
export const ERROR_CODES = [
  'bad_request',
  'validation_failed',
  'unauthenticated',
  'payment_required',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'conflict',
  'payload_too_large',
  'quota_exceeded',
  'overage_budget_cap_reached',
  'rate_limited',
  'internal_error',
  'llm_not_configured',
  'not_configured',
  'bad_gateway',
  'service_unavailable',
  'maintenance',
  'storage_unavailable',
  'llm_unavailable',
  'embedding_unavailable',
  'insufficient_storage',
] as const;
export type WireErrorCode = (typeof ERROR_CODES)[number];
