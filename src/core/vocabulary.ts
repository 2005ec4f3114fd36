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

/** The longest task text a request may carry, in characters (learn, recall, compose, imports). */
export const MAX_TASK_CHARS = 10_000;
/** (+) Who judged a reused pattern's outcome (docs/behavior.md "Outcomes"). */
export const OUTCOME_SOURCES = ['tests', 'evaluator', 'human', 'agent'] as const;
/** (+) An outcome's `detail` (docs/behavior.md "Outcomes"). */
export const MAX_OUTCOME_DETAIL_CHARS = 2_000;

/** Records one import request may carry (docs/behavior.md "Limits"). */
export const MAX_IMPORT_RECORDS = 10_000;

/** Bounds of a retention setting, in days (about a hundred years at most). */
export const MIN_RETENTION_DAYS = 1;
export const MAX_RETENTION_DAYS = 36_500;

/** (+) Most recalls in one POST /v1/recall/batch: 1,000 tasks are 10 requests. */
export const RECALL_BATCH_MAX = 100;
/**
 * Tenant, project and pattern ids: path-safe, 1-64 letters, digits, `_` or `-`. Our own ids
 * are lower-case base36; the reference system's (`3f2a9c1b_1731000000000_aB3-xY`) also use
 * upper-case letters, `_` and `-`, and imported patterns keep them.
 */
export const ID_CHARS = '[A-Za-z0-9_-]{1,64}';
export const ID = new RegExp(`^${ID_CHARS}$`);
/** The id rule in words, for error messages. */
export const ID_RULE = '1-64 letters, digits, _ or -';

/** A pattern's key is this prefix and its id (`patterns/<id>`). */
export const PATTERN_KEY_PREFIX = 'patterns/';
export const PATTERN_KEY = new RegExp(`^${PATTERN_KEY_PREFIX}(${ID_CHARS})$`);
