import { ERROR_TABLE, isWireErrorCode } from '../core/error-table.js';

/**
 * Errors the client throws. Callers branch on the class:
 * - ApiError: the service answered with a non-success status (body kept as sent).
 * - TransportError: no usable answer at all (refused, reset, timeout, DNS).
 * - ProtocolError: an answer that does not match the contract (wrong service, version skew).
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** Human-readable reason, taken from the body (`detail`, `message` or `error`). */
    readonly detail: string,
    /** The parsed JSON body (or the raw text when it was not JSON). */
    readonly body: unknown,
    /** From the body's `request_id` or the X-Request-Id header; quote it when reporting bugs. */
    readonly requestId: string | null,
    /** Seconds from a Retry-After header (429), when present. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(`HTTP ${status}: ${detail}`);
    this.name = 'ApiError';
  }

  /** The stable error code of the body (`validation_failed`, `not_found`, …), null when absent. */
  get code(): string | null {
    const code = isRecord(this.body) ? this.body.code : undefined;
    return typeof code === 'string' ? code : null;
  }

  /**
   * Whether sending the same request again later can succeed (the error table's `retryable`:
   * rate limits, unavailability, a full disk); false for a code this client does not know.
   */
  get retryable(): boolean {
    const code = this.code;
    return isWireErrorCode(code) && ERROR_TABLE[code].retryable;
  }

  /** Field errors of a 422 (`errors: [{path, message}]`), empty otherwise. */
  get fieldErrors(): { path: string; message: string }[] {
    const errors = isRecord(this.body) ? this.body.errors : undefined;
    if (!Array.isArray(errors)) return [];
    return errors
      .filter(isRecord)
      .map((e) => ({ path: String(e.path ?? ''), message: String(e.message ?? '') }));
  }
}

export class TransportError extends Error {
  constructor(
    readonly url: string,
    message: string,
    /** The low-level code (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT…) when known. */
    readonly code: string | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportError';
  }
}

export class ProtocolError extends Error {
  constructor(readonly url: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProtocolError';
  }
}

/** The base URL given to the client is not an http(s) URL. */
export class InvalidUrlError extends Error {
  constructor(readonly url: string) {
    super(`invalid service URL "${url}" (expected http://host:port or https://host)`);
    this.name = 'InvalidUrlError';
  }
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Picks the most useful sentence out of any of the spec's error body shapes. */
export function describeErrorBody(status: number, body: unknown): string {
  if (isRecord(body)) {
    if (typeof body.detail === 'string' && body.detail) return body.detail;
    if (body.error === 'quota_exceeded') {
      const metric = String(body.metric ?? 'quota');
      return `${metric} quota exceeded (${String(body.current)}/${String(body.limit)}), resets ${String(body.reset_date)}`;
    }
    if (typeof body.message === 'string' && body.message) return body.message;
    if (typeof body.error === 'string' && body.error) return body.error.replace(/_/g, ' ');
  }
  if (typeof body === 'string' && body.trim()) return body.trim().slice(0, 500);
  return `HTTP ${status}`;
}
