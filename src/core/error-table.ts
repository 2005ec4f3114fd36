/**
 * THE error table: one row per stable error code (the `code` of every error body). Everything
 * that turns an error into something a caller sees reads it: the server's error handler (HTTP
 * status), the client's error classes, the CLI's exit codes, the MCP tool errors (whose code is
 * the row's code: MCP speaks the REST codes) and the OpenAPI error responses. Adding a code is
 * adding a row here; test/unit/error-table.test.ts walks the table against every consumer.
 *
 * This file imports nothing, so the zod contracts, the client and the CLI may all read it.
 */

/** The CLI's exit codes (docs/cli.md "Exit codes"): scripts rely on them. */
export const ExitCode = {
  OK: 0,
  /** Server error, conflict, not configured, unavailable, unreachable, unexpected answer. */
  FAILURE: 1,
  /** Invalid input: validation, body too large, bad usage, unreadable file, bad configuration. */
  USAGE: 2,
  /** Not authenticated or not allowed. */
  AUTH: 3,
  NOT_FOUND: 4,
  /** Payment required, quota or rate limit reached. */
  LIMITED: 5,
  /** `evaluate`: the score is below --min-score. */
  BELOW_MIN_SCORE: 100,
  /** `evaluate --baseline`: the gate held but a case got worse than in the baseline run. */
  REGRESSED: 101,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export interface ErrorRow {
  /** The HTTP status the code is answered with (one code, one status). */
  status: number;
  /** The exit code of a CLI command that failed with it. */
  exit: ExitCode;
  /** A short human title (OpenAPI error responses, docs). */
  title: string;
  /** Sending the same request again later can succeed without changing it. */
  retryable: boolean;
  /**
   * The code an answer of this status gets when nothing names a finer one (Fastify's own
   * errors, a proxy's answer): set on exactly one row of each status shared by several codes.
   */
  generic?: true;
}

const { FAILURE, USAGE, AUTH, NOT_FOUND, LIMITED } = ExitCode;

export const ERROR_TABLE = {
  bad_request: { status: 400, exit: USAGE, title: 'Bad request', retryable: false },
  validation_failed: { status: 422, exit: USAGE, title: 'Validation failed', retryable: false },
  unauthenticated: { status: 401, exit: AUTH, title: 'Missing, invalid, revoked or expired key', retryable: false },
  payment_required: { status: 402, exit: LIMITED, title: 'Subscription past due', retryable: false },
  forbidden: { status: 403, exit: AUTH, title: 'The key lacks the permission (or the plan the feature)', retryable: false },
  not_found: { status: 404, exit: NOT_FOUND, title: 'Not found', retryable: false },
  method_not_allowed: { status: 405, exit: FAILURE, title: 'Method not allowed on this path', retryable: false },
  conflict: { status: 409, exit: FAILURE, title: 'Conflict with the current state', retryable: false },
  payload_too_large: { status: 413, exit: USAGE, title: 'Body larger than SERVICE_MAX_BODY_SIZE', retryable: false },
  quota_exceeded: { status: 429, exit: LIMITED, title: 'Plan or key quota reached', retryable: false },
  overage_budget_cap_reached: { status: 429, exit: LIMITED, title: 'Overage budget cap reached', retryable: false },
  rate_limited: { status: 429, exit: LIMITED, title: 'Rate limit reached (Retry-After)', retryable: true, generic: true },
  internal_error: { status: 500, exit: FAILURE, title: 'Internal error (cause logged, never shown)', retryable: false },
  llm_not_configured: { status: 501, exit: FAILURE, title: 'No LLM provider configured', retryable: false, generic: true },
  not_configured: { status: 501, exit: FAILURE, title: 'Optional feature not configured', retryable: false },
  bad_gateway: { status: 502, exit: FAILURE, title: 'The LLM answered with nothing usable', retryable: true },
  service_unavailable: { status: 503, exit: FAILURE, title: 'Temporarily unavailable', retryable: true, generic: true },
  maintenance: { status: 503, exit: FAILURE, title: 'Maintenance mode', retryable: true },
  storage_unavailable: { status: 503, exit: FAILURE, title: 'Storage unavailable', retryable: true },
  llm_unavailable: { status: 503, exit: FAILURE, title: 'LLM provider unavailable', retryable: true },
  embedding_unavailable: { status: 503, exit: FAILURE, title: 'Embedding model unavailable', retryable: true },
  insufficient_storage: { status: 507, exit: FAILURE, title: 'Storage is full', retryable: true },
} as const satisfies Record<string, ErrorRow>;

/** Stable, machine-readable error codes: clients branch on these, never on message text. */
export type WireErrorCode = keyof typeof ERROR_TABLE;
export const ERROR_CODES = Object.keys(ERROR_TABLE) as [WireErrorCode, ...WireErrorCode[]];

export function isWireErrorCode(code: unknown): code is WireErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_TABLE, code);
}

export function errorRow(code: WireErrorCode): ErrorRow {
  return ERROR_TABLE[code];
}

/** The codes answered with a status, in table order. */
export function codesForStatus(status: number): WireErrorCode[] {
  return ERROR_CODES.filter((code) => ERROR_TABLE[code].status === status);
}

/** The code for a status that did not come with a code (Fastify's own errors, proxies…). */
export function wireCodeForStatus(status: number): WireErrorCode {
  const codes = codesForStatus(status);
  const generic = codes.length === 1 ? codes[0] : codes.find((code) => (ERROR_TABLE[code] as ErrorRow).generic);
  return generic ?? (status >= 500 ? 'internal_error' : 'bad_request');
}
