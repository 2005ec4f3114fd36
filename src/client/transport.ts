import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { createPool, type LightPool } from './undici-pool.js';
import { apiErrorFor } from './api-errors.js';
import { InvalidUrlError, ProtocolError, TransportError, describeErrorBody, isRecord } from './errors.js';
import {
  checkAnswer, parseBody, queryString, type HttpMethod, type RequestOptions, type RequestTransport, type StreamedResponse, type StreamOptions,
} from './wire.js';

export interface TransportOptions {
  url: string;
  timeoutMs: number;
  /** Sent on every request (auth, project, user agent). */
  headers: Record<string, string>;
  /**
   * `contract` (default): every answer is parsed with its zod contract. `shape`: answers that
   * declare their top-level fields are only checked for those, which keeps zod out of a
   * process that starts per call (the CLI in shell loops).
   */
  responseCheck?: 'contract' | 'shape';
  /** Waiting on 429/503 answers that say when to come back; none by default. */
  retry?: RetryPolicy;
}

/** One wait the client is about to make, for progress displays. */
export interface RetryWait {
  status: number;
  /** Seconds about to be waited. */
  seconds: number;
  /** 1 for the first retry of this request. */
  attempt: number;
  method: string;
  path: string;
}

export interface RetryPolicy {
  /** Total time one request may spend waiting, in ms; past it the 429/503 is thrown. */
  maxWaitMs: number;
  /**
   * Waits `wait.seconds` before the retry (default: a plain timer). Replace it to show the
   * wait to a person, or in tests to wait on a settable clock instead of real time.
   */
  wait?: (wait: RetryWait) => Promise<void>;
}

/**
 * Connection-level failure codes in words. The library says what happened; what to do about
 * it in a shell (`--url`, SERVICE_URL) is the CLI's to add (commands/shared/print-error.ts).
 */
const TRANSPORT_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed (temporary DNS failure)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed by the server',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

/**
 * One keep-alive pool per client (one origin), JSON in and out, every answer checked against
 * its contract. The only retries are those the server asks for: a 429 or 503 carrying
 * RateLimit-Reset or Retry-After was refused before any work, so sending it again is safe even
 * for learn and import. Connection failures are never retried (the request may have landed),
 * nor is a write answered 503 `storage_unavailable` (its database connection may have broken
 * after the write reached the database).
 */
export class HttpTransport implements RequestTransport {
  readonly baseUrl: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly pool: LightPool;

  constructor(private readonly opts: TransportOptions) {
    let parsed: URL;
    try {
      parsed = new URL(opts.url);
    } catch {
      throw new InvalidUrlError(opts.url);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidUrlError(opts.url);
    this.origin = parsed.origin;
    // A deployment behind a path prefix (http://host/memory) keeps its prefix.
    this.basePath = parsed.pathname.replace(/\/+$/, '');
    this.baseUrl = this.origin + this.basePath;
    this.pool = createPool(this.origin, {
      connections: 8,
      keepAliveTimeout: 10_000,
      connect: { timeout: Math.min(opts.timeoutMs, 10_000) },
    });
  }

  async request<S extends z.ZodType>(method: HttpMethod, path: string, options: RequestOptions<S>): Promise<z.infer<S>> {
    const fullPath = this.basePath + path + queryString(options.query);
    const url = this.origin + fullPath;
    const headers: Record<string, string> = { accept: 'application/json', ...this.opts.headers, ...options.headers };
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }

    let waitedMs = 0;
    for (let attempt = 1; ; attempt++) {
      let response: Dispatcher.ResponseData;
      let text: string;
      try {
        response = await this.pool.request({
          path: fullPath,
          method,
          headers,
          body: payload,
          headersTimeout: this.opts.timeoutMs,
          bodyTimeout: this.opts.timeoutMs,
        });
        text = await response.body.text();
      } catch (err) {
        throw toTransportError(err, url, this.opts.timeoutMs);
      }

      const status = response.statusCode;
      const body = parseBody(text);
      const ok = status >= 200 && status < 300;
      if (ok || options.acceptStatuses?.includes(status)) {
        const checked = await checkAnswer(body, options, this.opts.responseCheck);
        if (checked.success) return checked.data;
        if (ok) throw new ProtocolError(url, `unexpected response from ${method} ${url}${checked.where}; is this the right service and version?`);
      }
      const wait = mayHaveLanded(method, status, body) ? null : waitHintMs(response, status);
      const retry = this.opts.retry;
      if (retry && wait !== null && waitedMs + wait <= retry.maxWaitMs) {
        const info = { status, seconds: wait / 1000, attempt, method, path };
        await (retry.wait ? retry.wait(info) : sleep(wait));
        waitedMs += wait;
        continue;
      }
      throw apiErrorFor(status, describeErrorBody(status, body), body, requestIdOf(response, body), retryAfter(response));
    }
  }

  /**
   * A streamed GET (NDJSON export): resolves once a 2xx answer's headers arrived, with the body
   * as an async iterable of chunks (read it to the end, or destroy it); a non-2xx answer is
   * read whole and thrown as ApiError like request() does.
   */
  async stream(path: string, options: StreamOptions): Promise<StreamedResponse> {
    const fullPath = this.basePath + path + queryString(options.query);
    const url = this.origin + fullPath;
    let response: Dispatcher.ResponseData;
    try {
      response = await this.pool.request({
        path: fullPath,
        method: 'GET',
        headers: { ...this.opts.headers, accept: options.accept },
        headersTimeout: this.opts.timeoutMs,
        // Between chunks, not for the whole body: a large export may take longer than that.
        bodyTimeout: this.opts.timeoutMs,
      });
    } catch (err) {
      throw toTransportError(err, url, this.opts.timeoutMs);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const body = parseBody(await response.body.text().catch(() => ''));
      throw apiErrorFor(response.statusCode, describeErrorBody(response.statusCode, body), body, requestIdOf(response, body), retryAfter(response));
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') headers[name] = value;
    return { headers, body: response.body };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

function header(response: Dispatcher.ResponseData, name: string): string | null {
  const v = response.headers[name];
  if (Array.isArray(v)) return v[0] ?? null;
  return v ?? null;
}

function requestIdOf(response: Dispatcher.ResponseData, body: unknown): string | null {
  if (isRecord(body) && typeof body.request_id === 'string') return body.request_id;
  return header(response, 'x-request-id');
}

/**
 * How long a 429/503 asks us to wait, in ms, or null when it does not say (a quota answer:
 * waiting minutes would not help). RateLimit-Reset (seconds until the window turns) is the
 * more precise of the two; Retry-After (seconds or an HTTP date) otherwise.
 */
function waitHintMs(response: Dispatcher.ResponseData, status: number): number | null {
  if (status !== 429 && status !== 503) return null;
  const reset = Number(header(response, 'ratelimit-reset') ?? NaN);
  let seconds = Number.isFinite(reset) && reset >= 0 ? reset : retryAfter(response);
  if (seconds === null) {
    const date = Date.parse(header(response, 'retry-after') ?? '');
    if (Number.isNaN(date)) return null;
    seconds = Math.max(0, (date - Date.now()) / 1000);
  }
  // Never hammer: a window that turns "now" still gets a short pause.
  return Math.max(250, Math.ceil(seconds * 1000));
}

/** A write refused with `storage_unavailable`: its outcome is unknown, so it is not resent by itself. */
function mayHaveLanded(method: string, status: number, body: unknown): boolean {
  if (status !== 503 || method === 'GET' || method === 'HEAD') return false;
  return (body as { code?: unknown } | null)?.code === 'storage_unavailable';
}

function retryAfter(response: Dispatcher.ResponseData): number | null {
  const v = header(response, 'retry-after');
  if (v === null) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

export function toTransportError(err: unknown, url: string, timeoutMs: number): TransportError {
  const code = errorCode(err);
  let reason: string;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    reason = `no response within ${timeoutMs / 1000} s`;
  } else if (code !== null && TRANSPORT_REASONS[code]) {
    reason = TRANSPORT_REASONS[code];
  } else {
    reason = err instanceof Error ? err.message : String(err);
  }
  return new TransportError(url, `cannot reach the service at ${url}: ${reason}`, code, { cause: err });
}

/** The first `code` found on the error or its causes (undici wraps socket errors). */
function errorCode(err: unknown): string | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const rec = current as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof rec.code === 'string') return rec.code;
    // Happy-eyeballs connects fail with an AggregateError holding one error per address.
    current = Array.isArray(rec.errors) && rec.errors.length > 0 ? rec.errors[0] : rec.cause;
  }
  return null;
}
