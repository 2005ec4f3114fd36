import { z } from 'zod';
import { ERROR_CODES, type WireErrorCode } from '../core/vocabulary.js';

export const ErrorCodeSchema = z.enum(ERROR_CODES);
export type { WireErrorCode };

/** HTTP status each code is answered with (one code, one status). */
export const ERROR_STATUS: Record<WireErrorCode, number> = {
  bad_request: 400,
  validation_failed: 422,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  quota_exceeded: 429,
  overage_budget_cap_reached: 429,
  rate_limited: 429,
  internal_error: 500,
  llm_not_configured: 501,
  not_configured: 501,
  bad_gateway: 502,
  service_unavailable: 503,
  maintenance: 503,
  storage_unavailable: 503,
  llm_unavailable: 503,
  embedding_unavailable: 503,
  insufficient_storage: 507,
};

const FieldError = z.object({ path: z.string(), message: z.string() });

/** Every error answer: the spec's shapes (`detail`, or `error` + fields for 402/429) plus `code`. */
export const ErrorBody = z.object({
  code: ErrorCodeSchema,
  detail: z.string().optional(),
  request_id: z.string().optional(),
  errors: z.array(FieldError).optional(),
  error: z.string().optional(),
  message: z.string().optional(),
}).passthrough();
export type ErrorBody = z.infer<typeof ErrorBody>;
