import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { DomainError, QuotaExceededError, RateLimitedError, StorageUnavailableError, ValidationError, type ErrorCode } from '../../src/core/errors.js';
import { wireCodeOf } from '../../src/core/wire-codes.js';
import { wireCodeForStatus } from './error-codes.js';
import { allowedMethods } from './method-not-allowed.js';

/** Domain code → HTTP status (the README's error table, docs/behavior.md "Errors"). */
const STATUS: Record<ErrorCode, number> = {
  validation: 422,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payment_required: 402,
  quota_exceeded: 429,
  overage_budget_cap_reached: 429,
  rate_limited: 429,
  payload_too_large: 413,
  llm_not_configured: 501,
  not_configured: 501,
  bad_gateway: 502,
  unavailable: 503,
  insufficient_storage: 507,
  internal: 500,
};

/** Seconds a rate-limited client should wait (the spec fixes it at 60). */
export const RETRY_AFTER_SECONDS = 60;

/** Seconds a client should wait after a 503 `storage_unavailable` (a fresh connection is opened on the next request). */
export const STORAGE_RETRY_AFTER_SECONDS = 1;

/**
 * Retry-After (the window length: 60 by the spec) plus the standard RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset (seconds until the window turns), so a client can
 * wait exactly as long as needed.
 */
function setRateLimitHeaders(reply: FastifyReply, error: DomainError): void {
  const info = error instanceof RateLimitedError ? error.info : null;
  reply.header('retry-after', String(info?.windowSeconds ?? RETRY_AFTER_SECONDS));
  if (!info) return;
  reply.header('ratelimit-limit', String(info.limit));
  reply.header('ratelimit-remaining', '0');
  reply.header('ratelimit-reset', String(info.resetSeconds));
}

interface Mapped {
  status: number;
  body: Record<string, unknown>;
}

/**
 * The one place errors become responses. Domain errors map by code; Fastify's own errors
 * (body parsing, size, media type) map to the same shapes; anything else is a 500 whose
 * cause is logged and never shown.
 */
export function installErrorHandling(app: FastifyInstance, maxBodySize: number): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = mapError(error, maxBodySize);
    if (mapped.status >= 500 && !(error instanceof DomainError)) {
      request.log.error({ err: error }, 'unhandled error');
    } else if (mapped.status >= 500) {
      request.log.warn({ err: error }, (error as Error).message);
    }
    if (error instanceof DomainError && error.code === 'rate_limited') setRateLimitHeaders(reply, error);
    // A lost or unreachable database: the pool reconnects on the next request, so come back soon.
    if (error instanceof StorageUnavailableError) reply.header('retry-after', String(STORAGE_RETRY_AFTER_SECONDS));
    return reply.status(mapped.status).send({ ...mapped.body, request_id: request.id });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allow = allowedMethods(app, path);
    if (allow.length > 0) {
      // A known path asked with the wrong method: say which methods it has (RFC 9110 §15.5.6).
      return reply.status(405).header('allow', allow.join(', ')).send({
        code: 'method_not_allowed', detail: `${request.method} is not allowed on ${path}; allowed: ${allow.join(', ')}`, request_id: request.id,
      });
    }
    return reply.status(404).send({ code: 'not_found', detail: `no route for ${request.method} ${path}`, request_id: request.id });
  });
}

/**
 * Fastify answers some malformed requests before any hook runs (a URL whose percent-encoding
 * is not UTF-8, a path parameter over the router's length limit): same `{detail}` shape as
 * every other error, and the URL is not echoed back.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const detail = FRAMEWORK_DETAIL[error.code] ?? 'malformed request';
  void reply.status(status).send({ code: wireCodeForStatus(status), detail, request_id: request.id });
}

const FRAMEWORK_DETAIL: Record<string, string> = {
  FST_ERR_BAD_URL: 'the URL has a component that is not valid percent-encoded UTF-8',
  FST_ERR_MAX_PARAM_LENGTH: 'a path parameter is too long',
  FST_ERR_ASYNC_CONSTRAINT: 'the request does not match any route constraint',
};

/** The status and body of any error, `code` included (README's error table). */
export function mapError(error: unknown, maxBodySize: number): Mapped {
  const mapped = mapWithoutCode(error, maxBodySize);
  const code = error instanceof DomainError ? wireCodeOf(error) : wireCodeForStatus(mapped.status);
  return { status: mapped.status, body: { code, ...mapped.body } };
}

function mapWithoutCode(error: unknown, maxBodySize: number): Mapped {
  if (error instanceof QuotaExceededError) {
    return {
      status: 429,
      body: {
        error: 'quota_exceeded', metric: error.metric, current: error.current, limit: error.limit,
        reset_date: error.reset_date, detail: error.message,
      },
    };
  }
  if (error instanceof ValidationError) {
    return { status: 422, body: { detail: error.message, errors: error.errors } };
  }
  if (error instanceof DomainError) {
    if (error.code === 'payment_required') return { status: 402, body: { error: 'payment_required', message: error.message } };
    if (error.code === 'overage_budget_cap_reached') {
      return { status: 429, body: { error: 'overage_budget_cap_reached', detail: error.message } };
    }
    return { status: STATUS[error.code], body: { detail: error.code === 'internal' ? 'internal error' : error.message } };
  }
  if (error instanceof ZodError) {
    const errors = error.issues.map((i) => ({ path: i.path.map(String).join('.') || 'body', message: i.message }));
    return { status: 422, body: { detail: 'invalid request', errors } };
  }
  return mapStorageFault(error) ?? mapFastifyError(error as FastifyError, maxBodySize);
}

/**
 * The file system refusing a write (JSON storage, issue 18, 5): a full disk is 507, an I/O or
 * read-only fault 503, each naming the cause; the refused write is not visible (the store
 * reloads from disk), and writes resume by themselves once the cause is gone.
 */
function mapStorageFault(error: unknown): Mapped | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== 'string') return null;
  const why = STORAGE_FAULTS[code];
  if (!why) return null;
  return {
    status: why.status,
    body: { detail: `storage write failed: ${why.text} (${code}); a write that was not acknowledged is not kept: retry once that is resolved` },
  };
}

const STORAGE_FAULTS: Record<string, { status: number; text: string }> = {
  ENOSPC: { status: 507, text: 'the disk is full' },
  EDQUOT: { status: 507, text: 'the disk quota is exhausted' },
  EIO: { status: 503, text: 'the disk reported an I/O error' },
  EROFS: { status: 503, text: 'the file system is read-only' },
};

function mapFastifyError(error: FastifyError, maxBodySize: number): Mapped {
  switch (error?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: { detail: `request body is larger than the maximum of ${maxBodySize} bytes` } };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return invalid('content-type', 'request bodies must be JSON: send Content-Type: application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalid('body', 'malformed JSON');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid('body', 'empty body with Content-Type: application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, body: { detail: 'request body size did not match Content-Length' } };
  }
  // Other client errors raised by Fastify itself (bad URL encoding, …) keep their status.
  const status = typeof error?.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500 && typeof error.code === 'string' && error.code.startsWith('FST_')) {
    return { status, body: { detail: error.message } };
  }
  return { status: 500, body: { detail: 'internal error' } };
}

function invalid(path: string, message: string): Mapped {
  return { status: 422, body: { detail: message, errors: [{ path, message }] } };
}
