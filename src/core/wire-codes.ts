import { DomainError, UnavailableError, type ErrorCode, type UnavailableSubsystem } from './errors.js';
import type { WireErrorCode } from './vocabulary.js';

/**
 * The wire code a domain error is answered with (README's error table): the server sends it
 * in every error body, and the CLI maps it to an exit code when a service ran in-process.
 * Unavailability is split by subsystem.
 */
const WIRE_CODES: Record<Exclude<ErrorCode, 'unavailable'>, WireErrorCode> = {
  validation: 'validation_failed',
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  not_found: 'not_found',
  conflict: 'conflict',
  payment_required: 'payment_required',
  quota_exceeded: 'quota_exceeded',
  overage_budget_cap_reached: 'overage_budget_cap_reached',
  rate_limited: 'rate_limited',
  payload_too_large: 'payload_too_large',
  llm_not_configured: 'llm_not_configured',
  bad_gateway: 'bad_gateway',
  insufficient_storage: 'insufficient_storage',
  not_configured: 'not_configured',
  internal: 'internal_error',
};

const UNAVAILABLE_CODES: Record<UnavailableSubsystem, WireErrorCode> = {
  maintenance: 'maintenance',
  storage: 'storage_unavailable',
  llm: 'llm_unavailable',
  embedding: 'embedding_unavailable',
  service: 'service_unavailable',
};

export function wireCodeOf(error: DomainError): WireErrorCode {
  if (error instanceof UnavailableError) return UNAVAILABLE_CODES[error.subsystem];
  if (error.code === 'unavailable') return 'service_unavailable';
  return WIRE_CODES[error.code];
}
