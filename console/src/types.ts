/**
 * Wire shapes the console reads. Existing endpoints come from the server's own contracts
 * (type-only imports: nothing of them is bundled).
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
export type { KeyInfo, KeyListResponse, IssuedKey, AccessResponse } from '../../src/contracts/keys.js';
export type { BillingStatusResponse } from '../../src/contracts/billing.js';
export type { HealthResponse, DeepHealthResponse } from '../../src/contracts/health.js';

export const CLASSIFICATIONS = ['public', 'internal', 'confidential'] as const;
export const SOURCES = ['api', 'sdk', 'cli', 'import'] as const;
export const JOB_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export const ROLLUP_WINDOWS = ['hourly', 'daily', 'weekly'] as const;

// The recall shapes (`score`, `explain`, `tier_policy`) and the pattern list, from the contracts too.
export type { RecallExplain as Explain, TierPolicy, RecallMatch, RecallResponse } from '../../src/contracts/memory.js';
export type { PatternSummary, PatternListResponse as PatternList } from '../../src/contracts/patterns.js';
