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

/** (+) Most recalls in one POST /v1/recall/batch: 1,000 tasks are 10 requests. */
export const RECALL_BATCH_MAX = 100;
