import { ApiError, InvalidUrlError, ProtocolError, TransportError } from '../client/errors.js';

/** A tool call that failed in a way the calling model can act on (shown as an MCP tool error). */
export interface ToolFailure {
  /** Stable machine code: the error table's codes (validation, forbidden, …) or unreachable/protocol. */
  code: string;
  /** HTTP status of the REST answer, null when there was none. */
  status: number | null;
  detail: string;
  /** Field errors of a validation failure. */
  errors?: { path: string; message: string }[];
  request_id?: string;
  retry_after_seconds?: number;
}

/** The README's error table read backwards: HTTP status → error code. */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthenticated',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'validation',
  429: 'rate_limited',
  501: 'llm_not_configured',
  502: 'bad_gateway',
  503: 'unavailable',
};

/** Thrown by a tool for arguments that only the MCP layer knows (e.g. mark_reused). */
export class ToolArgumentError extends Error {
  constructor(readonly path: string, readonly reason: string) {
    super(`invalid arguments: ${path}: ${reason}`);
    this.name = 'ToolArgumentError';
  }
}

/**
 * Maps what the client throws to a ToolFailure; null for anything unexpected (a bug), which
 * the caller logs and reports as `internal` without details.
 */
export function toolFailureOf(err: unknown): ToolFailure | null {
  if (err instanceof ApiError) {
    const body = err.body as Record<string, unknown> | null;
    // Quota and budget errors name themselves in `error`; other bodies carry only `detail`.
    const named = body && typeof body === 'object' && typeof body.error === 'string' ? body.error : null;
    const failure: ToolFailure = {
      code: named ?? CODE_BY_STATUS[err.status] ?? (err.status >= 500 ? 'internal' : 'error'),
      status: err.status,
      detail: err.detail,
    };
    if (err.fieldErrors.length > 0) failure.errors = err.fieldErrors;
    if (err.requestId) failure.request_id = err.requestId;
    if (err.retryAfterSeconds !== null) failure.retry_after_seconds = err.retryAfterSeconds;
    return failure;
  }
  if (err instanceof ToolArgumentError) {
    return { code: 'validation', status: null, detail: err.message, errors: [{ path: err.path, message: err.reason }] };
  }
  if (err instanceof TransportError || err instanceof InvalidUrlError) return { code: 'unreachable', status: null, detail: err.message };
  if (err instanceof ProtocolError) return { code: 'protocol', status: null, detail: err.message };
  return null;
}

/** One line for the model, then the field errors: what went wrong and what to change. */
export function renderFailure(failure: ToolFailure): string {
  const status = failure.status === null ? '' : `, HTTP ${failure.status}`;
  const lines = [`error (${failure.code}${status}): ${failure.detail}`];
  for (const e of failure.errors ?? []) lines.push(`- ${e.path}: ${e.message}`);
  if (failure.retry_after_seconds !== undefined) lines.push(`retry after ${failure.retry_after_seconds} s`);
  return lines.join('\n');
}
