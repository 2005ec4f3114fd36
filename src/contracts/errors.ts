import { z } from 'zod';
import { ERROR_CODES, type WireErrorCode } from '../core/error-table.js';

export const ErrorCodeSchema = z.enum(ERROR_CODES);
export type { WireErrorCode };

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
