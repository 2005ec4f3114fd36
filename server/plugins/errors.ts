import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { DomainError, QuotaExceededError, ValidationError, type ErrorCode } from '../../src/core/errors.js';

/** ARCHITECTURE.md error table: domain code → HTTP status. */
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
  internal: 500,
};

/** Seconds a rate-limited client should wait (the spec fixes it at 60). */
export const RETRY_AFTER_SECONDS = 60;

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
    if (error instanceof DomainError && error.code === 'rate_limited') reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    return reply.status(mapped.status).send({ ...mapped.body, request_id: request.id });
  });

  app.setNotFoundHandler((request, reply) => {
    return reply.status(404).send({ detail: `no route for ${request.method} ${request.url.split('?')[0]}`, request_id: request.id });
  });
}

export function mapError(error: unknown, maxBodySize: number): Mapped {
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
  return mapFastifyError(error as FastifyError, maxBodySize);
}

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
