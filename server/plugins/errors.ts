import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { errorRow, wireCodeForStatus, type WireErrorCode } from '../../src/core/error-table.js';
import { DomainError, QuotaExceededError, RateLimitedError, StorageUnavailableError, ValidationError } from '../../src/core/errors.js';
import { allowedMethods } from './method-not-allowed.js';

/** Seconds a rate-limited client should wait (the spec fixes it at 60). */
export const RETRY_AFTER_SECONDS = 60;

/** Seconds a client should wait after a 503 `storage_unavailable` (a fresh connection is opened on the next request). */
export const STORAGE_RETRY_AFTER_SECONDS = 1;

/**
 * Retry-After (the window length: 60 by the spec); the standard RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset (seconds until the window turns) come from the
 * refusing decision (plugins/rate-limit.ts), so a client can wait exactly as long as needed.
 */
function setRateLimitHeaders(reply: FastifyReply, error: DomainError): void {
  const info = error instanceof RateLimitedError ? error.info : null;
  reply.header('retry-after', String(info?.windowSeconds ?? RETRY_AFTER_SECONDS));
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
    if (mapped.status >= 500 && (!(error instanceof DomainError) || error.code === 'internal_error')) {
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
      return reply.status(errorRow('method_not_allowed').status).header('allow', allow.join(', ')).send({
        code: 'method_not_allowed', detail: `${request.method} is not allowed on ${path}; allowed: ${allow.join(', ')}`, request_id: request.id,
      });
    }
    return reply.status(errorRow('not_found').status).send({ code: 'not_found', detail: `no route for ${request.method} ${path}`, request_id: request.id });
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

/** The status and body of any error, `code` included: the status is the code's row of the error table. */
export function mapError(error: unknown, maxBodySize: number): Mapped {
  const { code, body, status } = mapToCode(error, maxBodySize);
  // A request stopped part-way says how far it got (an import: its counts), whatever the code.
  const progress = error instanceof DomainError && error.progress ? error.progress : {};
  return { status: status ?? errorRow(code).status, body: { code, ...body, ...progress } };
}

/** An error's code and body; `status` only where Fastify's own status is kept as it came. */
interface Coded {
  code: WireErrorCode;
  body: Record<string, unknown>;
  status?: number;
}

function mapToCode(error: unknown, maxBodySize: number): Coded {
  if (error instanceof QuotaExceededError) {
    return {
      code: error.code,
      body: {
        error: 'quota_exceeded', metric: error.metric, current: error.current, limit: error.limit,
        reset_date: error.reset_date, detail: error.message,
      },
    };
  }
  if (error instanceof ValidationError) {
    return { code: error.code, body: { detail: error.message, errors: error.errors } };
  }
  if (error instanceof DomainError) {
    if (error.code === 'payment_required') return { code: error.code, body: { error: 'payment_required', message: error.message } };
    if (error.code === 'overage_budget_cap_reached') {
      return { code: error.code, body: { error: 'overage_budget_cap_reached', detail: error.message } };
    }
    return { code: error.code, body: { detail: error.code === 'internal_error' ? 'internal error' : error.message } };
  }
  if (error instanceof ZodError) {
    const errors = error.issues.map((i) => ({ path: i.path.map(String).join('.') || 'body', message: i.message }));
    return { code: 'validation_failed', body: { detail: 'invalid request', errors } };
  }
  return mapStorageFault(error) ?? mapFastifyError(error as FastifyError, maxBodySize);
}

/**
 * The file system refusing a write (JSON storage): a full disk is 507, an I/O or
 * read-only fault 503, each naming the cause; the refused write is not visible (the store
 * reloads from disk), and writes resume by themselves once the cause is gone.
 */
function mapStorageFault(error: unknown): Coded | null {
  const errno = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof errno !== 'string') return null;
  const why = STORAGE_FAULTS[errno];
  if (!why) return null;
  return {
    code: why.code,
    body: { detail: `storage write failed: ${why.text} (${errno}); a write that was not acknowledged is not kept: retry once that is resolved` },
  };
}

const STORAGE_FAULTS: Record<string, { code: WireErrorCode; text: string }> = {
  ENOSPC: { code: 'insufficient_storage', text: 'the disk is full' },
  EDQUOT: { code: 'insufficient_storage', text: 'the disk quota is exhausted' },
  EIO: { code: 'service_unavailable', text: 'the disk reported an I/O error' },
  EROFS: { code: 'service_unavailable', text: 'the file system is read-only' },
};

function mapFastifyError(error: FastifyError, maxBodySize: number): Coded {
  switch (error?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'payload_too_large', body: { detail: `request body is larger than the maximum of ${maxBodySize} bytes` } };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return invalid('content-type', 'request bodies must be JSON: send Content-Type: application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalid('body', 'malformed JSON');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid('body', 'empty body with Content-Type: application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'bad_request', body: { detail: 'request body size did not match Content-Length' } };
    case 'SVC_BODY_NOT_UTF8': // server/utf8-body.ts
      return { code: 'bad_request', body: { detail: error.message } };
  }
  // Other client errors raised by Fastify itself (bad URL encoding, …) keep their status.
  const status = typeof error?.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500 && typeof error.code === 'string' && error.code.startsWith('FST_')) {
    return { code: wireCodeForStatus(status), status, body: { detail: error.message } };
  }
  return { code: 'internal_error', body: { detail: 'internal error' } };
}

function invalid(path: string, message: string): Coded {
  return { code: 'validation_failed', body: { detail: message, errors: [{ path, message }] } };
}
