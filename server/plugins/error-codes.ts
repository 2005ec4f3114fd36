import type { WireErrorCode } from '../../src/contracts/errors.js';

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
