import type { WireErrorCode } from './error-table.js';

/**
 * Domain errors carry the stable wire `code` of their row in the error table
 * (src/core/error-table.ts); the edges read that row for the HTTP status, the exit code and
 * the MCP error, so no other place maps codes.
 */
export type ErrorCode = WireErrorCode;

export interface FieldError {
  path: string;
  message: string;
}

/**
 * How far a request that stopped part-way had got, sent in its error body next to the code:
 * an import's counts and the last record it wrote (records up to it are stored or were
 * skipped, none after it).
 */
export interface PartialProgress {
  imported: number;
  skipped: number;
  total: number;
  /** The last record written: its index in the request's records and its key (null: none). */
  last_written: { index: number; key: string } | null;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  /** Set when the request had already written part of its work (see PartialProgress). */
  progress: PartialProgress | null = null;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }

  /** The same error, now also saying how far the request had got. */
  withProgress(progress: PartialProgress): this {
    this.progress = progress;
    return this;
  }
}

/**
 * 500 for a failure that repeating the request cannot fix (a bug, a row the database refuses
 * every time): the cause is logged, never shown; the message is safe to show (a job shows it).
 */
export class InternalError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('internal_error', message, options);
  }
}

export class ValidationError extends DomainError {
  readonly errors: FieldError[];
  constructor(message: string, errors: FieldError[] = []) {
    super('validation_failed', message);
    this.errors = errors;
  }
}

export class UnauthenticatedError extends DomainError {
  constructor(message = 'missing or invalid API key') {
    super('unauthenticated', message);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

export class NotFoundError extends DomainError {
  constructor(message: string) {
    super('not_found', message);
  }
}

export class ConflictError extends DomainError {
  constructor(message: string) {
    super('conflict', message);
  }
}

export class PaymentRequiredError extends DomainError {
  constructor(message: string) {
    super('payment_required', message);
  }
}

/** 429 with the spec's quota body. */
export class QuotaExceededError extends DomainError {
  constructor(
    readonly metric: 'eval_runs' | 'patterns' | 'projects',
    readonly current: number,
    readonly limit: number,
    readonly reset_date: string,
  ) {
    super('quota_exceeded', `${metric} quota exceeded (${current}/${limit})`);
  }
}

export class OverageCapError extends DomainError {
  constructor(message = 'overage budget cap reached') {
    super('overage_budget_cap_reached', message);
  }
}

/** (+) An evaluation that would pass the caller's cost budget (max_cost_usd) is not started. */
export class BudgetExceededError extends DomainError {
  constructor(message: string) {
    super('budget_exceeded', message);
  }
}

/** What a refused client needs to pace itself (sent as RateLimit-* and Retry-After headers). */
export interface RateLimitInfo {
  limit: number;
  /** Seconds until the current window ends and the count starts again. */
  resetSeconds: number;
  /** The window's length in seconds: the Retry-After value (60 by the spec). */
  windowSeconds: number;
}

export class RateLimitedError extends DomainError {
  constructor(message = 'rate limit exceeded, retry in 60 seconds', readonly info: RateLimitInfo | null = null) {
    super('rate_limited', message);
  }
}

export class LlmNotConfiguredError extends DomainError {
  constructor(message = 'no LLM provider is configured (SERVICE_LLM_PROVIDER=none or missing API key)') {
    super('llm_not_configured', message);
  }
}

/** 501: an optional feature whose configuration is missing (the message names the variable). */
export class NotConfiguredError extends DomainError {
  constructor(message: string) {
    super('not_configured', message);
  }
}

/** The upstream answered, but not with anything usable (e.g. malformed JSON twice). */
export class BadGatewayError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('bad_gateway', message, options);
  }
}

/** Which part of the service is unavailable: each has its own error code. */
export type UnavailableSubsystem = 'maintenance' | 'storage' | 'llm' | 'embedding' | 'service';

const UNAVAILABLE_CODES = {
  maintenance: 'maintenance',
  storage: 'storage_unavailable',
  llm: 'llm_unavailable',
  embedding: 'embedding_unavailable',
  service: 'service_unavailable',
} as const satisfies Record<UnavailableSubsystem, WireErrorCode>;

/** The store has no room for a write (disk full, quota): 507, retry once space is freed. */
export class InsufficientStorageError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('insufficient_storage', message, options);
  }
}

/** Maintenance, storage down, LLM outage after retries, embedder down. */
export class UnavailableError extends DomainError {
  readonly subsystem: UnavailableSubsystem;
  constructor(message: string, options?: { cause?: unknown; subsystem?: UnavailableSubsystem }) {
    const subsystem = options?.subsystem ?? 'service';
    super(UNAVAILABLE_CODES[subsystem], message, options);
    this.subsystem = subsystem;
  }
}

export class MaintenanceError extends UnavailableError {
  constructor(message = 'the service is in maintenance mode; try again later') {
    super(message, { subsystem: 'maintenance' });
  }
}

export class StorageUnavailableError extends UnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, subsystem: 'storage' });
  }
}

export class LlmUnavailableError extends UnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, subsystem: 'llm' });
  }
}

export class EmbeddingUnavailableError extends UnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, subsystem: 'embedding' });
  }
}
