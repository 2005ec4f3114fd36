/**
 * The package's public entry: a typed client for a running service.
 *
 *   import { ServiceClient } from 'agent-memory-service';
 *   const client = new ServiceClient({ url: 'http://127.0.0.1:8000', apiKey: myApiKey });
 *   await client.learn({ task, code, eval_score: 8.5 });
 *   const { matches } = await client.recall({ task });
 */
export {
  ServiceClient, MAX_IMPORT_RECORDS,
  type ServiceClientOptions, type RecallGetQuery, type SkillsRegisterInput, type SkillsSearchInput, type ImportAllOptions,
} from './service-client.js';
export type { HttpMethod, QueryValue, RequestOptions, RequestTransport, RetryPolicy, RetryWait, SchemaSource, StreamedResponse, StreamOptions } from './transport.js';
export { ApiError, TransportError, ProtocolError, InvalidUrlError } from './errors.js';
export {
  BadGatewayError, BadRequestError, ConflictError, EmbeddingUnavailableError, ForbiddenError, InsufficientStorageError,
  InternalServerError, LlmNotConfiguredError, NotConfiguredError, LlmUnavailableError, MaintenanceError, MethodNotAllowedError, NotFoundError,
  OverageBudgetCapReachedError, PayloadTooLargeError, PaymentRequiredError, QuotaExceededError, RateLimitedError,
  ServiceUnavailableError, StorageUnavailableError, UnauthenticatedError, ValidationFailedError, errorCodeOf,
} from './api-errors.js';
export type { WireErrorCode } from '../contracts/errors.js';
export type {
  LearnRequest, LearnResponse, RecallRequest, RecallResponse, RecallMatch, MetricsResponse, AgingResponse,
  DeletePatternResponse, ExportRecord, ExportResponse, ImportRecord, AnyImportRecord, ImportRequest, ImportResponse,
  SkillsSearchResponse,
} from '../contracts/memory.js';
export type { HealthResponse, DeepHealthResponse, VersionResponse } from '../contracts/health.js';
export {
  GovernanceClient, type DeletionOptions, type NdjsonExportOptions, type ClassifyResponse, type DeletionResultResponse,
  type NdjsonExportRecord,
} from './governance.js';
export { BillingClient } from './billing.js';
export type { BillingStatusResponse, CheckoutRequest, CheckoutResponse, PortalResponse, OverageRequest, OverageResponse } from '../contracts/billing.js';
