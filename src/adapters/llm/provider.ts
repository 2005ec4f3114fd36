import { scrubSecretText } from '../../core/secret-scrub.js';
import type { LlmCompletion, LlmRequest } from '../../ports/llm.js';

/**
 * What each SDK adapter (openai.ts, anthropic.ts) offers the resilient wrapper: exactly one
 * attempt, no retries of its own, cancellable through `signal`. Failures are thrown as
 * ProviderCallError so the retry policy never has to know either SDK's error classes.
 */
export interface ProviderClient {
  readonly provider: 'openai' | 'anthropic';
  readonly model: string;
  /** `headers` go out with the request (the W3C traceparent of the active span, when tracing). */
  call(req: LlmRequest, signal: AbortSignal, headers?: Record<string, string>): Promise<LlmCompletion>;
  ping(signal: AbortSignal): Promise<void>;
}

export type ProviderFailure = 'http' | 'timeout' | 'connection' | 'aborted';

export class ProviderCallError extends Error {
  constructor(
    message: string,
    readonly failure: ProviderFailure,
    /** HTTP status when the provider answered. */
    readonly status: number | null = null,
    /** Delay the provider asked for (Retry-After / retry-after-ms), in milliseconds. */
    readonly retryAfterMs: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderCallError';
  }
}

/**
 * Retry-After is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). Returns the delay
 * in milliseconds, or null when absent or unparseable. `nowMs` is passed in so the date form
 * is testable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

/** The provider's requested delay from response headers (retry-after-ms wins when present). */
export function retryAfterFromHeaders(headers: Headers | undefined, nowMs: number): number | null {
  if (!headers) return null;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  return parseRetryAfter(headers.get('retry-after'), nowMs);
}

/** Shared SDK-error translation: both SDKs (Stainless-generated) expose the same error shape. */
export function translateSdkError(
  err: unknown,
  classes: { APIError: abstract new (...a: never[]) => Error; APIConnectionTimeoutError: abstract new (...a: never[]) => Error; APIConnectionError: abstract new (...a: never[]) => Error; APIUserAbortError: abstract new (...a: never[]) => Error },
  provider: string,
  secrets: readonly string[] = [],
): unknown {
  if (err instanceof classes.APIUserAbortError) return new ProviderCallError(`${provider} request aborted`, 'aborted', null, null, { cause: err });
  if (err instanceof classes.APIConnectionTimeoutError) return new ProviderCallError(`${provider} request timed out`, 'timeout', null, null, { cause: err });
  // The SDK's error (its message, its request) may carry the key: only scrubbed text goes on,
  // and the original is not kept as the cause, so no log serializer can reach it.
  if (err instanceof classes.APIConnectionError) {
    return new ProviderCallError(`${provider} connection failed: ${scrubSecretText(err.message, secrets)}`, 'connection');
  }
  if (err instanceof classes.APIError) {
    const apiErr = err as Error & { status?: number; headers?: Headers };
    const status = typeof apiErr.status === 'number' ? apiErr.status : null;
    return new ProviderCallError(
      `${provider} answered HTTP ${status ?? '?'}: ${scrubSecretText(apiErr.message, secrets)}`,
      status === null ? 'connection' : 'http',
      status,
      retryAfterFromHeaders(apiErr.headers, Date.now()),
    );
  }
  return err;
}
