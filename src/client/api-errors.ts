import { isWireErrorCode, type WireErrorCode } from '../core/error-table.js';
import { ApiError, isRecord } from './errors.js';

/**
 * One error class per stable error code of the service (the error table,
 * src/core/error-table.ts; docs/http-api.md), so callers can `catch (e) { if (e instanceof NotFoundError) … }` instead of reading
 * statuses. Every class is an ApiError; an answer without a known `code` (another service, an
 * old server, a proxy) stays a plain ApiError.
 */
export class BadRequestError extends ApiError {}
export class ValidationFailedError extends ApiError {}
export class UnauthenticatedError extends ApiError {}
export class PaymentRequiredError extends ApiError {}
export class ForbiddenError extends ApiError {}
export class NotFoundError extends ApiError {}
export class MethodNotAllowedError extends ApiError {}
export class ConflictError extends ApiError {}
export class PayloadTooLargeError extends ApiError {}
export class QuotaExceededError extends ApiError {}
export class OverageBudgetCapReachedError extends ApiError {}
/** (+) The request's max_cost_usd would be passed: nothing was spent on it. */
export class BudgetExceededError extends ApiError {}
export class RateLimitedError extends ApiError {}
export class InternalServerError extends ApiError {}
export class LlmNotConfiguredError extends ApiError {}
/** A feature this deployment has not configured (billing without PAYMENT_SECRET_KEY). */
export class NotConfiguredError extends ApiError {}
export class BadGatewayError extends ApiError {}
/** Any temporary unavailability (503); the subclasses say which part. */
export class ServiceUnavailableError extends ApiError {}
export class MaintenanceError extends ServiceUnavailableError {}
export class StorageUnavailableError extends ServiceUnavailableError {}
export class LlmUnavailableError extends ServiceUnavailableError {}
export class EmbeddingUnavailableError extends ServiceUnavailableError {}
export class InsufficientStorageError extends ApiError {}

type ApiErrorClass = new (...args: ConstructorParameters<typeof ApiError>) => ApiError;

const CLASS_BY_CODE: Record<WireErrorCode, ApiErrorClass> = {
  bad_request: BadRequestError,
  validation_failed: ValidationFailedError,
  unauthenticated: UnauthenticatedError,
  payment_required: PaymentRequiredError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  conflict: ConflictError,
  payload_too_large: PayloadTooLargeError,
  quota_exceeded: QuotaExceededError,
  overage_budget_cap_reached: OverageBudgetCapReachedError,
  budget_exceeded: BudgetExceededError,
  rate_limited: RateLimitedError,
  internal_error: InternalServerError,
  llm_not_configured: LlmNotConfiguredError,
  not_configured: NotConfiguredError,
  bad_gateway: BadGatewayError,
  service_unavailable: ServiceUnavailableError,
  maintenance: MaintenanceError,
  storage_unavailable: StorageUnavailableError,
  llm_unavailable: LlmUnavailableError,
  embedding_unavailable: EmbeddingUnavailableError,
  insufficient_storage: InsufficientStorageError,
};

/** The error code an answer's body carries, when it is one this client knows. */
export function errorCodeOf(body: unknown): WireErrorCode | null {
  const code = isRecord(body) ? body.code : undefined;
  return isWireErrorCode(code) ? code : null;
}

/** The ApiError subclass for an error answer (plain ApiError when the body has no known code). */
export function apiErrorFor(...args: ConstructorParameters<typeof ApiError>): ApiError {
  const code = errorCodeOf(args[2]);
  const Class = code ? CLASS_BY_CODE[code] : ApiError;
  const error = new Class(...args);
  error.name = Class.name;
  return error;
}
