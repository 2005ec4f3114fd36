import { DomainError, UnavailableError, type ErrorCode, type UnavailableSubsystem } from '../../src/core/errors.js';
import type { WireErrorCode } from '../../src/contracts/errors.js';

/** Domain code → wire code (README's error table). Unavailability is split by subsystem below. */
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

/** A code for a status that did not come from a domain error (Fastify's own, proxies…). */
export function wireCodeForStatus(status: number): WireErrorCode {
  switch (status) {
    case 400: return 'bad_request';
    case 401: return 'unauthenticated';
    case 402: return 'payment_required';
    case 403: return 'forbidden';
    case 404: return 'not_found';
    case 405: return 'method_not_allowed';
    case 409: return 'conflict';
    case 413: return 'payload_too_large';
    case 422: return 'validation_failed';
    case 429: return 'rate_limited';
    case 501: return 'llm_not_configured';
    case 502: return 'bad_gateway';
    case 503: return 'service_unavailable';
    case 507: return 'insufficient_storage';
    default: return status >= 500 ? 'internal_error' : 'bad_request';
  }
}
