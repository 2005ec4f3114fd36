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
export { ServiceClient, type ServiceClientOptions } from './service-client.js';
export { ApiClient, type CallOptions, type ImportAllOptions } from './api-client.js';
export { MAX_IMPORT_RECORDS } from './import-chunks.js';
export { HttpTransport, type RetryPolicy, type RetryWait, type TransportOptions } from './transport.js';
// ApiClient over fetch (browsers, other runtimes); UNCHECKED takes answers as sent.
export { FetchTransport, type FetchTransportOptions } from './fetch-transport.js';
export { UNCHECKED, type SchemaLoader } from './wire.js';
export type { HttpMethod, QueryValue, RequestOptions, RequestTransport, SchemaSource, StreamedResponse, StreamOptions } from './wire.js';
// For a RequestTransport of one's own (the server's in-process MCP transport is one).
export { parseBody, queryString } from './wire.js';

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

// The wire types of every endpoint, as the contracts define them (the server validates with the same).
export type * from '../contracts/memory.js';
export type * from '../contracts/patterns.js';
export type * from '../contracts/health.js';
export type * from '../contracts/jobs.js';
export type * from '../contracts/keys.js';
export type * from '../contracts/llm.js';
export type * from '../contracts/analytics.js';
export type * from '../contracts/governance.js';
export type * from '../contracts/billing.js';
export type * from '../contracts/evaluations.js';
export type { RollupWindow } from '../core/roi.js';

// The areas: properties of ServiceClient (client.jobs, client.keys, …).
export { JobsClient, JobFailedError, isFinished, resultOf, type ImportJobOptions, type WaitOptions } from './jobs.js';
export { ASYNC_PATHS, type AsyncOperation, type AsyncResult, type AsyncResults } from './async-operations.js';
export { KeysClient } from './keys.js';
export { LlmClient } from './llm.js';
export { AnalyticsClient } from './analytics.js';
export { GovernanceClient, type DeletionOptions, type NdjsonExportOptions } from './governance.js';
export { RetentionClient } from './governance-retention.js';
export { BillingClient } from './billing.js';
export { EvaluationsClient } from './evaluations.js';
