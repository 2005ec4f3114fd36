/**
 * The package's public entry: a typed client for a running service, and the only module of
 * src/client the CLI imports (eslint/layers.js), so library users get everything it has.
 *
 *   import { ServiceClient } from 'agent-memory-service';
 *   const client = new ServiceClient({ url: 'http://127.0.0.1:8000', apiKey: myApiKey });
 *   await client.learn({ task, code, eval_score: 8.5 });
 *   const { matches } = await client.recall({ task });
 *   const { jobs } = await client.jobs.list();
 *
 * Contracts are re-exported as types only: importing this module loads no zod (the CLI's
 * start-up depends on it; test/cli/startup.test.ts checks it).
 */
export {
  ServiceClient,
  type ServiceClientOptions, type RecallGetQuery, type SkillsRegisterInput, type SkillsSearchInput, type ImportAllOptions,
} from './service-client.js';
export { MAX_IMPORT_RECORDS } from './import-chunks.js';
export type { HttpMethod, QueryValue, RequestOptions, RequestTransport, RetryPolicy, RetryWait, SchemaSource, StreamedResponse, StreamOptions } from './transport.js';
// For a RequestTransport of one's own (the server's in-process MCP transport is one).
export { parseBody, queryString } from './transport.js';

// Errors.
export { ApiError, TransportError, ProtocolError, InvalidUrlError, describeErrorBody, isRecord } from './errors.js';
export {
  BadGatewayError, BadRequestError, ConflictError, EmbeddingUnavailableError, ForbiddenError, InsufficientStorageError,
  InternalServerError, LlmNotConfiguredError, NotConfiguredError, LlmUnavailableError, MaintenanceError, MethodNotAllowedError, NotFoundError,
  OverageBudgetCapReachedError, PayloadTooLargeError, PaymentRequiredError, QuotaExceededError, RateLimitedError,
  ServiceUnavailableError, StorageUnavailableError, UnauthenticatedError, ValidationFailedError, apiErrorFor, errorCodeOf,
} from './api-errors.js';
// The error table (status, exit code, retryable of each code) the service and this client share.
export { ERROR_TABLE, type ErrorRow, type WireErrorCode } from '../core/error-table.js';

// Memory, skills and health: methods of ServiceClient.
export type {
  LearnRequest, LearnResponse, RecallRequest, RecallResponse, RecallMatch, MetricsResponse, AgingResponse,
  DeletePatternResponse, ExportRecord, ExportResponse, ImportRecord, AnyImportRecord, ImportRequest, ImportResponse,
  SkillsRegisterResponse, SkillsSearchResponse,
} from '../contracts/memory.js';
export type { HealthResponse, DeepHealthResponse, VersionResponse } from '../contracts/health.js';
export type { PatternListQuery, PatternListResponse, PatternSummary } from '../contracts/patterns.js';

// The areas: properties of ServiceClient (client.jobs, client.keys, …).
export {
  JobsClient, JobFailedError, ASYNC_PATHS, isFinished, resultOf,
  type AsyncOperation, type AsyncResult, type AsyncResults, type ImportJobOptions, type WaitOptions, type JobAccepted, type JobListResponse, type JobRecord, type JobStatus,
} from './jobs.js';
export { KeysClient, type BootstrapResponse, type CreateKeyRequest, type IssuedKey, type KeyInfo, type KeyListResponse } from './keys.js';
export {
  LlmClient, type FeedbackListQuery, type AnalyzeFailuresRequest, type AnalyzeFailuresResponse, type ComposeRequest,
  type ComposeResponse, type EvaluateRequest, type EvaluateResponse, type EvolveRequest, type EvolveResponse,
  type FeedbackResponse, type FeedbackDecayResponse,
} from './llm.js';
export {
  AnalyticsClient, type EventsListQuery, type EventsResponse, type RollupRequest, type RollupResponse, type RollupWindow,
} from './analytics.js';
export {
  GovernanceClient, type DeletionOptions, type NdjsonExportOptions, type ClassifyResponse, type DeletionResultResponse,
  type NdjsonExportRecord,
} from './governance.js';
export { RetentionClient, type RetentionApplyResponse, type RetentionPolicyResponse } from './governance-retention.js';
export { BillingClient } from './billing.js';
export type { BillingStatusResponse, CheckoutRequest, CheckoutResponse, PortalResponse, OverageRequest, OverageResponse } from '../contracts/billing.js';
