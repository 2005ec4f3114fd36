import { ValidationError } from './errors.js';
import { CLASSIFICATIONS, ID_RULE, PATTERN_KEY, PATTERN_KEY_PREFIX, ROLES, SOURCES } from './vocabulary.js';

/**
 * Glossary (the words every layer uses):
 * - Pattern: one stored successful run (task, code, quality). Addressed by key `patterns/<id>`.
 * - Scope: tenant_id + project_id; every storage call takes one and never crosses it.
 * - similarity: cosine of task embeddings clamped to [0, 1].
 * - reuse tier: duplicate / adapt / fresh, from raw similarity and configurable thresholds.
 * - quality factor: 0.5 + 0.05 × median of the last 5 eval observations (0.75 when none).
 * - eval observation: one score for a pattern (learn's eval_score, evaluate with pattern_key,
 *   a near-duplicate learn).
 * - success_score: the decaying quality score (starts at eval_score, aged weekly, +0.1 per reuse).
 * - feedback cluster: a recurring quality issue built from evaluator feedback sentences.
 * - ROI event: metadata of one learn/recall (never task content), rolling 10,000 per scope.
 *
 * Persisted records use snake_case so they match the wire and export shapes one to one.
 * Times are ISO-8601 strings in UTC.
 */

export interface Scope {
  tenant_id: string;
  project_id: string;
}

export { CLASSIFICATIONS, ROLES, SOURCES };
export type Classification = (typeof CLASSIFICATIONS)[number];

export type Source = (typeof SOURCES)[number];

export type Role = (typeof ROLES)[number];

export type ReuseTier = 'duplicate' | 'adapt' | 'fresh';

export interface TierThresholds {
  duplicate: number;
  adapt: number;
}

/** Where a reuse-tier threshold in force came from (env → model folder → built-in → spec). */
export type TierSource = 'env' | 'model_config' | 'builtin' | 'spec_default';

/** The thresholds in force for the configured embedding model, with their sources. */
export interface ReuseTierSettings extends TierThresholds {
  source: { duplicate: TierSource; adapt: TierSource };
  /**
   * (+) How tiers are decided (core/tier-policy.ts): `fixed` thresholds, or `calibrated`
   * rules with a per-project adapt threshold (the thresholds above are then its fallback).
   */
  policy?: 'fixed' | 'calibrated';
  /** Where the policy came from. */
  policy_source?: 'env' | 'model_config' | 'env_thresholds' | 'default';
  /** The embedding model the thresholds were resolved for. */
  model: string;
}

export interface PatternRecord {
  /** Unique id: minted ones are time-ordered [0-9a-z]; imported ones may add A-Z, _ and - (path-safe either way). */
  id: string;
  task: string;
  code: string;
  output: string | null;
  eval_score: number;
  success_score: number;
  reuse_count: number;
  run_id: string | null;
  classification: Classification;
  source: Source;
  author: string | null;
  expires_at: string | null;
  redacted: boolean;
  created_at: string;
  updated_at: string;
  /** When aging last decayed this pattern (null: never, decay counts from created_at). */
  last_aged_at: string | null;
}

/** The key of a pattern id (`patterns/<id>`). */
export function patternKey(id: string): string {
  return `${PATTERN_KEY_PREFIX}${id}`;
}

/** `patterns/<id>` → id; null when the key is not a well-formed pattern key. */
export function idFromPatternKey(key: string): string | null {
  return PATTERN_KEY.exec(key)?.[1] ?? null;
}

/** `patterns/<id>` → id, or a 422 naming the field (checked before storage is touched). */
export function parsePatternKey(key: string, path = 'key'): string {
  const id = idFromPatternKey(key);
  if (id === null) throw new ValidationError('invalid pattern key', [{ path, message: `must look like ${PATTERN_KEY_PREFIX}<id> (id: ${ID_RULE})` }]);
  return id;
}

/** The fields of a pattern an export record carries, with its key for its id (the wire's ExportRecord). */
export type ExportedPattern = Pick<PatternRecord,
  'task' | 'code' | 'output' | 'eval_score' | 'success_score' | 'reuse_count' | 'run_id' | 'classification' | 'source' | 'author' |
  'expires_at' | 'redacted' | 'created_at' | 'updated_at'> & { key: string };

/** A stored pattern as an export record (export, NDJSON export, GET /v1/patterns/{key}). */
export function toExportRecord(p: PatternRecord): ExportedPattern {
  return {
    key: patternKey(p.id),
    task: p.task,
    code: p.code,
    output: p.output,
    eval_score: p.eval_score,
    success_score: p.success_score,
    reuse_count: p.reuse_count,
    run_id: p.run_id,
    classification: p.classification,
    source: p.source,
    author: p.author,
    expires_at: p.expires_at,
    redacted: p.redacted,
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}

/** Why a key cannot address a pattern, or null when it can. */
export function patternKeyProblem(key: string): string | null {
  if (!key.startsWith(PATTERN_KEY_PREFIX)) return `key outside ${PATTERN_KEY_PREFIX}`;
  return idFromPatternKey(key) === null ? `key id must be ${ID_RULE}` : null;
}

export interface PatternFilter {
  classification?: Classification;
  /** (+) Any of these classifications (NDJSON export's `classification=a,b`); with `classification`, both apply. */
  classifications?: Classification[];
  source?: Source;
  /** Minimum success_score (inclusive). */
  min_score?: number;
  /** (+) Maximum success_score (inclusive). */
  max_score?: number;
  /** (+) updated_at strictly after / before these ISO times (GET /v1/patterns). */
  updated_after?: string;
  updated_before?: string;
}

/** Whether a filter restricts anything (an object of undefined fields does not). */
export function hasFilter(f: PatternFilter | undefined): f is PatternFilter {
  return !!f && Object.values(f).some((v) => v !== undefined);
}

/** (+) Where a pattern listing newest-first resumes: the last listed (updated_at, id). */
export interface PatternCursor {
  updated_at: string;
  id: string;
}

export interface ScoredPattern {
  pattern: PatternRecord;
  similarity: number;
  /** The pattern's newest eval observations, newest first (empty when none or not asked for). */
  recent_evals: number[];
}

/**
 * A search hit with only what recall ranks and dedups on: no code or output, which can be
 * hundreds of kilobytes and are needed for the returned page alone.
 */
export interface RecallCandidate {
  id: string;
  task: string;
  similarity: number;
  /** The pattern's newest eval observations, newest first (empty when none or not asked for). */
  recent_evals: number[];
  /** The pattern's last learn/update time (recency-weighted recall measures age from it). */
  updated_at: string;
}

export interface FeedbackCluster {
  id: string;
  /** The representative sentence. */
  text: string;
  count: number;
  score: number;
  last_seen: string;
  last_decayed_at: string | null;
  /** Up to 5 tasks that produced it. */
  tasks: string[];
}

export interface MetricsCounters {
  runs: number;
  successes: number;
  eval_sum: number;
  recalls: number;
  reusing_recalls: number;
}

// A type alias, not an interface: it must fit the events contract, whose records stay open to
// further fields (an interface is never assignable to an index signature).
export type RoiEvent = {
  at: string;
  kind: 'learn' | 'recall';
  /** learn: stored or not; recall: best similarity/tier and match count. No task content. */
  stored?: boolean;
  /**
   * (+) recall: true for a lookup that counted no reuse (GET, `readonly: true`: the CLI, the
   * console, MCP), false for one that did; absent on events written before lookups were recorded.
   */
  readonly?: boolean;
  eval_score?: number;
  best_similarity?: number | null;
  best_tier?: ReuseTier | null;
  matches?: number;
  latency_ms?: number;
};

export interface AuditEvent {
  at: string;
  kind: string;
  tenant_id: string | null;
  project_id: string | null;
  /** Key id, 'env', 'dev', oidc subject; never a secret. */
  actor: string | null;
  request_id: string | null;
  ip: string | null;
  detail: Record<string, unknown>;
}

export interface EmbeddingInfo {
  provider: 'local' | 'openai';
  model: string;
  dimension: number;
}
