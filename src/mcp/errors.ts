import { ApiError, InvalidUrlError, ProtocolError, TransportError, errorCodeOf, isRecord } from '../client/index.js';
import { ERROR_TABLE, isWireErrorCode, wireCodeForStatus, type WireErrorCode } from '../core/error-table.js';

/** A tool call that failed in a way the calling model can act on (shown as an MCP tool error). */
export interface ToolFailure {
  /**
   * Stable machine code: the REST error code (the error table, src/core/error-table.ts:
   * validation_failed, forbidden, …), or unreachable / protocol when no answer came at all.
   */
  code: WireErrorCode | 'unreachable' | 'protocol';
  /** The same request may succeed later unchanged (the error table's `retryable`). */
  retryable: boolean;
  /** HTTP status of the REST answer, null when there was none. */
  status: number | null;
  detail: string;
  /** Field errors of a validation failure. */
  errors?: { path: string; message: string }[];
  request_id?: string;
  retry_after_seconds?: number;
}

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
    // The answer's own code (quota bodies also name it in `error`); an answer with neither (a
    // proxy's) gets the code of its status.
    const named = isRecord(err.body) && isWireErrorCode(err.body.error) ? err.body.error : null;
    const code = errorCodeOf(err.body) ?? named ?? wireCodeForStatus(err.status);
    const failure: ToolFailure = { code, retryable: ERROR_TABLE[code].retryable, status: err.status, detail: err.detail };
    if (err.fieldErrors.length > 0) failure.errors = err.fieldErrors;
    if (err.requestId) failure.request_id = err.requestId;
    if (err.retryAfterSeconds !== null) failure.retry_after_seconds = err.retryAfterSeconds;
    return failure;
  }
  if (err instanceof ToolArgumentError) {
    return { code: 'validation_failed', retryable: false, status: null, detail: err.message, errors: [{ path: err.path, message: err.reason }] };
  }
  if (err instanceof TransportError) return { code: 'unreachable', retryable: true, status: null, detail: err.message };
  if (err instanceof InvalidUrlError) return { code: 'unreachable', retryable: false, status: null, detail: err.message };
  if (err instanceof ProtocolError) return { code: 'protocol', retryable: false, status: null, detail: err.message };
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
