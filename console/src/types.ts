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
  PatternOutcomesResponse,
} from '../../src/contracts/memory.js';
export type { RetentionPolicyResponse, RetentionApplyResponse } from '../../src/contracts/governance.js';
export type { RollupResponse, EventsResponse } from '../../src/contracts/analytics.js';
export type { AnalyzeFailuresResponse, FeedbackResponse, EvaluateResponse } from '../../src/contracts/llm.js';
export type { KeyInfo, KeyListResponse, IssuedKey, AccessResponse } from '../../src/contracts/keys.js';
export type { BillingStatusResponse } from '../../src/contracts/billing.js';
export type { HealthResponse, DeepHealthResponse } from '../../src/contracts/health.js';

export type { JobRecord, JobListResponse, JobStatus } from '../../src/contracts/jobs.js';
export type { CreateKeyRequest } from '../../src/contracts/keys.js';
// The closed word lists, from the one place core and the contracts take them.
export { CLASSIFICATIONS, JOB_STATUSES, ROLES, ROLLUP_WINDOWS, SOURCES } from '../../src/core/vocabulary.js';

// The recall shapes (`score`, `explain`, `tier_policy`) and the pattern list, from the contracts too.
export type { RecallExplain as Explain, TierPolicy, RecallMatch, RecallResponse, RecallGetQuery } from '../../src/contracts/memory.js';
export type { PatternSummary, PatternListResponse as PatternList, PatternListQuery } from '../../src/contracts/patterns.js';
