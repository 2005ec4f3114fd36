import type {
  AuditEvent, Classification, EmbeddingInfo, FeedbackCluster, MetricsCounters, PatternCursor, PatternFilter, PatternRecord,
  RoiEvent, Scope, ScoredPattern,
} from '../core/types.js';
import type { HybridCandidateSet, HybridQuery } from '../core/hybrid.js';
import type { BillingRepository } from './billing.js';
import type { EvaluationRunRepository } from './evaluation-runs.js';
import type { JobRepository } from './jobs.js';
import type { RetentionSettings } from '../core/retention.js';
import type { RollupWindow } from '../core/roi.js';
import type { RollupResponse } from '../contracts/analytics.js';
import type { DeletionCounts, DeletionTarget } from '../core/governance.js';
import type { CachedJudgement } from '../core/judge-cache-key.js';
import type { OutcomeEvidence, OutcomeReport, RecallTrace } from '../core/outcome-types.js';

/**
 * Storage is split into small repositories. Every method that touches tenant data takes a
 * Scope and never reads or writes outside it. Adapters: JSON (embedded default) and
 * PostgreSQL + pgvector. Both pass test/contract/storage.contract.ts unchanged.
 */
export interface PatternRepository {
  /** Stores a new pattern with its task vector, atomically (both or neither). */
  insert(scope: Scope, pattern: PatternRecord, vector: Float32Array): Promise<void>;
  /** The pattern, or null when absent in this scope. */
  get(scope: Scope, id: string): Promise<PatternRecord | null>;
  /** Several patterns by id (missing ids are skipped), in no particular order. */
  getMany(scope: Scope, ids: string[]): Promise<PatternRecord[]>;
  /** Replaces the stored record (same id); the vector too when given. False when absent. */
  update(scope: Scope, pattern: PatternRecord, vector?: Float32Array): Promise<boolean>;
  /** Hard delete: pattern, vector, eval observations and skill tags. False when absent. */
  delete(scope: Scope, id: string): Promise<boolean>;
  /** Number of stored patterns in the scope. */
  count(scope: Scope): Promise<number>;
  /**
   * Nearest patterns to `vector` by cosine similarity (clamped to [0,1]), best first, with the
   * filter applied inside the search (never after it), at most `k`. Each hit carries its
   * whole record (learn's near-identical check lands on it) and its newest `evalWindow` eval
   * observations (newest first; none asked for when 0 or absent: recall's eval weighting),
   * so neither caller needs a second query.
   */
  search(scope: Scope, vector: Float32Array, k: number, filter?: PatternFilter, evalWindow?: number): Promise<ScoredPattern[]>;
  /**
   * Hybrid recall's candidates (docs/behavior.md "Recall" 2): the union of the `vectorK`
   * nearest patterns by cosine (none without a query vector) and the `keywordK` best by BM25
   * over the query's selective terms (core/bm25.ts selectiveTerms), the filter applied inside both; for each, the exact raw cosine and its unit
   * vector's dot product with the project's mean vector, plus the project's BM25 and mean
   * figures (core/hybrid.ts scores them). Order of the candidates is not significant.
   */
  hybridCandidates(scope: Scope, query: HybridQuery): Promise<HybridCandidateSet>;
  /**
   * Up to `n` patterns with a meaningful vector, spread evenly over the scope in id order,
   * with their unit vectors (the tier policy fits its threshold on them; bounded cost).
   */
  sampleVectors(scope: Scope, n: number): Promise<{ id: string; vector: Float32Array }[]>;
  /**
   * (+) One page of the scope's patterns matching the filter, newest updated_at first (ties:
   * higher id first), strictly after `after` in that order when given: keyset paging, so a
   * page is found without counting the pages before it.
   */
  list(scope: Scope, page: { limit: number; after: PatternCursor | null; filter?: PatternFilter }): Promise<PatternRecord[]>;
  /** Every pattern of the scope matching the filter, ordered by id (oldest first), streamed in pages. */
  iterate(scope: Scope, filter?: PatternFilter): AsyncIterable<PatternRecord>;
  /** For each id: reuse_count + 1 and success_score + delta (capped at 10), updated_at = at. */
  recordReuse(scope: Scope, ids: string[], delta: number, at: string): Promise<void>;
  /**
   * Sets the pattern's classification in one atomic step (no read-modify-write race with
   * reuse counting); updated_at is left alone. The updated record, or null when absent.
   */
  classify(scope: Scope, id: string, classification: Classification): Promise<PatternRecord | null>;
  /** Replaces the vector of an existing pattern (reindex). */
  setVector(scope: Scope, id: string, vector: Float32Array): Promise<void>;
  /** Every scope that holds at least one pattern (reindex, migrate-data). */
  listScopes(): Promise<Scope[]>;
  /**
   * (+, optional) The stored vectors of these patterns by id (missing ids skipped), in the
   * direction they were stored (a store may keep unit-length copies: cosine is unchanged).
   * Storages that offer it let `service migrate-data` copy vectors instead of re-embedding.
   */
  vectors?(scope: Scope, ids: string[]): Promise<Map<string, Float32Array>>;
  /**
   * (+, optional) Writes one import batch atomically: every pattern (inserted with its first
   * eval observation, or replacing the stored one when `replace`) or none of them. Import uses
   * it when offered, so a failure mid-batch leaves nothing of that batch behind. With a
   * tenant quota, the batch's new patterns are checked against it in the same atomic step.
   * An insert whose id is stored by the time the batch runs (another run of the same import
   * job got there first) is left alone and counted in `present`: the counts say what this
   * write actually stored.
   */
  writeBatch?(scope: Scope, writes: BatchWrite[], tenantQuota?: TenantPatternQuota | null): Promise<BatchOutcome>;
  /**
   * (+, optional) `service migrate-data`: inserts copied patterns, each with its eval
   * observations and skill tags, atomically (every one of the batch or none), so a copy killed
   * at any point never leaves a pattern without its history. Ids must not exist yet.
   */
  copyIn?(scope: Scope, patterns: CopiedPattern[]): Promise<void>;
}

/** One pattern as `service migrate-data` copies it, with everything that belongs to it. */
export interface CopiedPattern {
  record: PatternRecord;
  vector: Float32Array;
  /** Eval observations, oldest first. */
  evals: { score: number; at: string }[];
  skills: string[];
}

/**
 * The plan's limit on the patterns of a whole tenant (docs/behavior.md "Billing"), given to the
 * writes that add patterns so the store checks it in the same atomic step as the insert:
 * concurrent writes in different projects of one tenant (each under its own scope lock) can
 * never together pass it. A write that would is refused with QuotaExceededError('patterns',
 * current, limit, reset_date) and writes nothing.
 */
export interface TenantPatternQuota {
  limit: number;
  /** The refusal's reset_date (`YYYY-MM-DD`). */
  reset_date: string;
}

/** One pattern of an atomic import batch. */
/** What one writeBatch stored: `written` inserts and replacements, `present` inserts found already stored. */
export interface BatchOutcome {
  written: number;
  present: number;
}

export interface BatchWrite {
  record: PatternRecord;
  vector: Float32Array;
  replace: boolean;
}

export interface EvalRepository {
  /** Records one eval observation of a pattern. */
  add(scope: Scope, patternId: string, score: number, at: string): Promise<void>;
  /** The last `n` observations per pattern id, newest first; ids with none are absent. */
  recent(scope: Scope, patternIds: string[], n: number): Promise<Map<string, number[]>>;
}

export interface FeedbackRepository {
  /** All clusters of the scope (at most 500 are kept by the service). */
  list(scope: Scope): Promise<FeedbackCluster[]>;
  /** Inserts or replaces clusters by id. */
  upsert(scope: Scope, clusters: FeedbackCluster[]): Promise<void>;
  /** Removes clusters by id. */
  remove(scope: Scope, ids: string[]): Promise<void>;
}

export interface SkillRepository {
  /** Replaces the tags of a pattern (empty list removes them). */
  set(scope: Scope, patternId: string, skills: string[]): Promise<void>;
  /** Tags of one pattern ([] when none). */
  get(scope: Scope, patternId: string): Promise<string[]>;
  /** Patterns carrying any (or, with matchAll, every) of the tags: pattern id → its tags. */
  search(scope: Scope, skills: string[], matchAll: boolean): Promise<Map<string, string[]>>;
}

export interface MetricsRepository {
  /** Counts one learn run. */
  recordRun(scope: Scope, evalScore: number): Promise<void>;
  /** Counts one POST recall; `reused` when its best match was duplicate or adapt. */
  recordRecall(scope: Scope, reused: boolean): Promise<void>;
  /** Current counters (zeros when none). */
  get(scope: Scope): Promise<MetricsCounters>;
  /**
   * Raises each counter to at least the given value (`service migrate-data` copying the
   * source's counters): idempotent, so a copy run again never counts anything twice.
   */
  raiseTo(scope: Scope, counters: MetricsCounters): Promise<void>;
}

export interface AnalyticsRepository {
  /** Appends an ROI event; only the newest 10,000 per scope are kept. */
  append(scope: Scope, event: RoiEvent): Promise<void>;
  /** Events newest first, optionally since a time (inclusive), at most `limit`. */
  list(scope: Scope, opts: { since?: string; limit: number }): Promise<RoiEvent[]>;
}

/** Pre-computed analytics rollups: the latest one per scope and window. */
export interface RollupRepository {
  /** Stores the scope's rollup of `rollup.window`, replacing the previous one of that window. */
  put(scope: Scope, rollup: RollupResponse): Promise<void>;
  /** The scope's latest rollup of `window`, or null when it was never computed. */
  get(scope: Scope, window: RollupWindow): Promise<RollupResponse | null>;
}

/**
 * Governance settings of projects and tenants (retention). A scope nobody configured reads as
 * all-null; setting a value creates whatever record the backend needs.
 */
export interface ProjectSettingsRepository {
  /** retention_days of the scope's project and of its tenant (null: not set). */
  getRetention(scope: Scope): Promise<RetentionSettings>;
  /** Sets the project's retention_days (1–36500), or clears it with null (inherit). */
  setProjectRetention(scope: Scope, days: number | null, at: string): Promise<void>;
  /** Sets the tenant's retention_days, or clears it with null (operators, tests). */
  setTenantRetention(tenantId: string, days: number | null, at: string): Promise<void>;
}

/**
 * (+) The judge cache (docs/behavior.md "Judge cache"): verdicts of evaluate by key
 * (core/judge-cache-key.ts, hashed), per project, so every CI runner of the project shares them.
 * Only complete verdicts are put; a project keeps its newest JUDGE_CACHE_MAX_ENTRIES.
 */
export interface JudgeCacheRepository {
  get(scope: Scope, key: string): Promise<CachedJudgement | null>;
  /** Stores (or replaces) the verdict under `key`. */
  put(scope: Scope, key: string, judgement: CachedJudgement): Promise<void>;
}

export interface AuditRepository {
  /** Appends one security event (never a secret in `detail`). */
  append(event: AuditEvent): Promise<void>;
  /** Newest first, for tests and operators. */
  list(filter: { tenant_id?: string; kind?: string; limit: number }): Promise<AuditEvent[]>;
  /**
   * Governance deletion: events of the target keep kind, time, scope, actor and request id but
   * lose their detail and ip (the personal part). Returns how many events were scrubbed.
   */
  scrub(target: DeletionTarget): Promise<number>;
}

export interface DeletionOptions {
  /** Time of the deletion (keys revoked at it). */
  at: string;
  /**
   * Running jobs of these operations are kept (an asynchronous deletion must not delete the job
   * its caller polls for the result).
   */
  keepRunningOperations: string[];
}

/** Governance deletions of a whole project or tenant (docs/behavior.md "Governance"). */
export interface GovernanceRepository {
  /** What deleteScope would delete now; changes nothing (dry run). */
  countScope(target: DeletionTarget, opts: DeletionOptions): Promise<DeletionCounts>;
  /**
   * Deletes everything the target holds: patterns with their vectors, eval observations, skill
   * tags, feedback, metrics, ROI events, rollups, jobs, retention settings; scrubs the target's
   * audit events; PostgreSQL also revokes the target's keys (same database). All or nothing:
   * one transaction in PostgreSQL; in JSON an intent file makes a crash mid-way finish the
   * deletion at the next open.
   */
  deleteScope(target: DeletionTarget, opts: DeletionOptions): Promise<DeletionCounts>;
}

/** What `outcomes.report` did: stored anew, replaced an earlier report, or refused (no such recall; not one of its matches). */
export type OutcomeReportResult = 'stored' | 'replaced' | 'unknown_recall' | 'not_a_match';

/** A recall's trace with the outcomes reported against it (export, import, migrate-data). */
export interface TracedOutcomes {
  trace: RecallTrace;
  outcomes: OutcomeReport[];
}

/**
 * (+) Recall traces and the outcomes reported against them (docs/behavior.md "Outcomes").
 * Traces are written by recordRecall / recordLookup (the recall's own bookkeeping write); this
 * repository reports outcomes against them, reads them for ranking and the console, and purges
 * them. An outcome belongs to its trace and to its pattern: deleting either deletes it.
 */
export interface OutcomeRepository {
  /**
   * Stores the outcome of reusing `report.pattern_key` for `report.recall_id`, replacing an
   * earlier report of the same (recall_id, pattern_key). Refused without writing when the
   * recall is unknown (or purged), or the key is not among its returned matches (or the
   * pattern is gone). A `credit` moves the pattern's success_score by that much (kept within
   * [0, 10], updated_at left alone) in the same step, when the report is stored anew.
   */
  report(scope: Scope, report: OutcomeReport, opts?: { credit?: number }): Promise<OutcomeReportResult>;
  /** The recall's trace, or null when unknown or purged. */
  getTrace(scope: Scope, recallId: string): Promise<RecallTrace | null>;
  /**
   * Per pattern id, its newest outcomes (newest first, at most `perPattern`, default
   * OUTCOME_EVIDENCE_PER_PATTERN) with their recalls' queries; ids with none are absent.
   * Ranking reads this on every recall: one in-memory lookup (JSON) or one indexed query. The
   * lists are read-only: a storage may hand out the same list to recall after recall.
   */
  evidenceFor(scope: Scope, patternIds: string[], perPattern?: number): Promise<Map<string, readonly OutcomeEvidence[]>>;
  /** True when the scope holds at least one outcome (ranking skips evidenceFor otherwise). Cheap. */
  hasAny(scope: Scope): Promise<boolean>;
  /** A pattern's outcomes, newest first, at most `limit` (the console's pattern page). */
  listForPattern(scope: Scope, patternId: string, page: { limit: number }): Promise<OutcomeEvidence[]>;
  /** Deletes the traces (with their outcomes) and outcomes dated before `before` (retention). */
  purgeBefore(scope: Scope, before: string): Promise<{ traces: number; outcomes: number }>;
  /** Every trace of the scope that has outcomes, with them, oldest recall first (export). */
  iterate(scope: Scope): AsyncIterable<TracedOutcomes>;
  /** Stores a trace and its outcomes as given (import): an existing trace of that id is replaced with them. */
  restore(scope: Scope, traced: TracedOutcomes): Promise<void>;
  /** How many traces and outcomes the scope holds (governance dry runs, tests). */
  count(scope: Scope): Promise<{ traces: number; outcomes: number }>;
}

/** What one read-only recall records (docs/behavior.md "Recall" 7): its ROI event and its trace. */
export interface LookupRecord {
  event: RoiEvent;
  trace?: RecallTrace | null;
}

export interface MetaRepository {
  /** The embedding model the stored vectors were made with (null on an empty store). */
  getEmbeddingInfo(): Promise<EmbeddingInfo | null>;
  setEmbeddingInfo(info: EmbeddingInfo): Promise<void>;
}

/** What one POST recall reads and records (docs/behavior.md "Recall" 7). */
export interface RecallRecord {
  /** The patterns of the returned page, read as they were before this recall. */
  page_ids: string[];
  /** Patterns returned as reusable matches: reuse_count + 1, success_score + bonus (capped at 10). */
  reused_ids: string[];
  bonus: number;
  /** Time of the recall, also the patterns' new updated_at. */
  at: string;
  /** The best match was reusable (counts toward reuse_rate). */
  reused: boolean;
  event: RoiEvent;
  /** (+) The recall's trace (docs/behavior.md "Outcomes"), written in the same step. */
  trace?: RecallTrace | null;
}

/**
 * What one learn writes (docs/behavior.md "Learn" 5-7), all or nothing: the pattern write,
 * the run's eval observation of the pattern it landed on, the run counter and the ROI event.
 */
export interface LearnRecord {
  pattern: LearnPatternWrite;
  /** The run's eval_score: an eval observation of the pattern, and counted in the metrics. */
  eval_score: number;
  /** Time of the learn (the observation's time). */
  at: string;
  event: RoiEvent;
  /** Billing's tenant quota: an insert that would pass it writes nothing of the learn. */
  tenant_quota?: TenantPatternQuota | null;
}

/**
 * The learn's pattern: a new one stored with its task vector; a better run replacing the stored
 * record in place (same id, vector kept); or a stored one kept as it is. The observation goes
 * to `pattern.id` (`id` for keep) and, like every observation, only to a pattern that exists.
 */
export type LearnPatternWrite =
  | { op: 'insert'; pattern: PatternRecord; vector: Float32Array }
  | { op: 'replace'; pattern: PatternRecord }
  | { op: 'keep'; id: string };

export interface Storage {
  readonly kind: 'json' | 'postgres';
  readonly patterns: PatternRepository;
  readonly evals: EvalRepository;
  readonly feedback: FeedbackRepository;
  readonly skills: SkillRepository;
  readonly metrics: MetricsRepository;
  readonly analytics: AnalyticsRepository;
  readonly rollups: RollupRepository;
  readonly projects: ProjectSettingsRepository;
  readonly audit: AuditRepository;
  readonly meta: MetaRepository;
  readonly governance: GovernanceRepository;
  /** (+) Cached judge verdicts of evaluate. */
  readonly judgeCache: JudgeCacheRepository;
  /** (+) The durable job queue (ports/jobs.ts), kept in the same store as the data it works on. */
  readonly jobs: JobRepository;
  /** (+) Recall traces and reported outcomes (docs/behavior.md "Outcomes"). */
  readonly outcomes: OutcomeRepository;
  /** (+) Evaluation runs and their cases (ports/evaluation-runs.ts). */
  readonly evaluationRuns: EvaluationRunRepository;
  /** (+) Hosted billing's accounts and usage counters (ports/billing.ts); both adapters have it. */
  readonly billing?: BillingRepository;
  /**
   * A POST recall's page and writes: returns the records of `page_ids` as they were before this
   * recall (missing ids skipped, like getMany), and makes the writes of patterns.recordReuse,
   * metrics.recordRecall and analytics.append (JSON: journal lines sharing the scope's fsyncs;
   * PostgreSQL: queued and written in batches, docs/behavior.md "Recall bookkeeping"). Reads
   * of this process through the storage see the writes.
   */
  recordRecall(scope: Scope, record: RecallRecord): Promise<PatternRecord[]>;
  /**
   * (+) A read-only recall's writes in one step: its ROI event and its trace (JSON: one journal
   * line; PostgreSQL: queued like recordRecall's, docs/behavior.md "Recall bookkeeping"). The
   * service does not wait for it (services/lookup-events.ts).
   */
  recordLookup(scope: Scope, record: LookupRecord): Promise<void>;
  /**
   * (+) Waits until the recall bookkeeping this process has handed over so far (recordRecall,
   * recordLookup, analytics.append) is written, or given up after its retries (docs/behavior.md
   * "Recall bookkeeping"), so an outcome that arrives right after its recall's answer finds the
   * recall's trace. JSON writes before it answers: nothing to wait for.
   */
  settleRecallWrites(): Promise<void>;
  /**
   * (+) A learn's writes in one step, all or nothing (PostgreSQL: one transaction; JSON: one
   * journal line), so a failure or crash never leaves a pattern without its eval observation,
   * nor counters or an ROI event of a learn that did not happen. An insert whose id exists is
   * a ConflictError; a replace or keep of a pattern deleted meanwhile writes no pattern and no
   * observation, and still counts the run. An insert that would pass `tenant_quota` is a
   * QuotaExceededError (replace and keep add no pattern and are never refused).
   */
  recordLearn(scope: Scope, record: LearnRecord): Promise<void>;
  /** A real round trip to the backing store (deep health); throws when it is down. */
  ping(): Promise<void>;
  /**
   * (+, optional) Runs `fn` while holding a lock on the scope that every process sharing this
   * store respects (PostgreSQL: a transaction-level advisory lock). Learn's near-duplicate
   * check and its writes (recordLearn) run under it, so concurrent identical learns store one
   * pattern. Stores
   * owned by one process (JSON) need none: the service's in-process lock suffices.
   */
  withScopeLock?<T>(scope: Scope, fn: () => Promise<T>): Promise<T>;
  /**
   * (+, optional) Stores with numbered migrations: the revision applied last, e.g.
   * `0003_fast_recall`, read with a real query (deep health uses it in place of ping).
   */
  schemaRevision?(): Promise<string | null>;
  /** Flushes and releases files, locks and connections. */
  close(): Promise<void>;
}
