/**
 * Wire shapes the console reads. Existing endpoints come from the server's own contracts
 * (type-only imports: nothing of them is bundled); the shapes agreed for issue 27 (`score`,
 * `explain`, `tier_policy`) and GET /v1/patterns are declared here as the brief fixed them.
 */
export type {
  ExportRecord,
  MetricsResponse,
  AgingResponse,
  DeletePatternResponse,
  SkillsRegisterResponse,
  PatternHistoryResponse,
} from '../../src/contracts/memory.js';
export type { RetentionPolicyResponse, RetentionApplyResponse } from '../../src/contracts/governance.js';
export type { RollupResponse, EventsResponse } from '../../src/contracts/analytics.js';
export type { JobRecord, JobListResponse } from '../../src/contracts/jobs.js';
export type { AnalyzeFailuresResponse, FeedbackResponse, EvaluateResponse } from '../../src/contracts/llm.js';
export type { KeyInfo, KeyListResponse, IssuedKey } from '../../src/contracts/keys.js';
export type { BillingStatusResponse } from '../../src/contracts/billing.js';
export type { HealthResponse, DeepHealthResponse } from '../../src/contracts/health.js';

export const CLASSIFICATIONS = ['public', 'internal', 'confidential'] as const;
export const SOURCES = ['api', 'sdk', 'cli', 'import'] as const;
export const JOB_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export const ROLLUP_WINDOWS = ['hourly', 'daily', 'weekly'] as const;

export interface Explain {
  cosine: number;
  centered_cosine: number;
  bm25: number;
  blended: number;
  eval_factor: number;
  recency_factor: number;
  score: number;
  tier_rule: string;
  tier_threshold: number | null;
}

export interface TierPolicy {
  policy: 'calibrated' | 'fixed';
  duplicate_threshold: number | null;
  adapt_threshold: number;
  source: string;
}

export interface RecallMatch {
  similarity: number;
  reuse_tier: 'duplicate' | 'adapt' | 'fresh';
  pattern_key: string;
  score?: number;
  pattern: { task: string; code: string; success_score: number; reuse_count: number };
  explain?: Explain;
}

export interface RecallResponse {
  matches: RecallMatch[];
  has_more: boolean;
  next_offset: number | null;
  tier_policy?: TierPolicy;
  warnings?: string[];
}

export interface PatternSummary {
  key: string;
  task: string;
  classification: string;
  source: string;
  success_score: number;
  eval_score: number;
  reuse_count: number;
  created_at: string;
  updated_at: string;
}

export interface PatternList {
  patterns: PatternSummary[];
  next_cursor: string | null;
}
