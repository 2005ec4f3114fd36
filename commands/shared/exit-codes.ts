import { ConfigError } from '../../src/config.js';
import type { WireErrorCode } from '../../src/contracts/errors.js';
import { DomainError } from '../../src/core/errors.js';
import { wireCodeOf } from '../../src/core/wire-codes.js';
import { ApiError, InvalidUrlError, ProtocolError, TransportError } from '../../src/client/index.js';

/**
 * The ONE table of CLI exit codes. Every command ends with one of these; scripts can rely on
 * them. (Copied into the README and shown at the end of `service --help`.)
 *
 * | code | meaning                                                                         |
 * |------|---------------------------------------------------------------------------------|
 * | 0    | success                                                                         |
 * | 1    | failure: server error (500), conflict (409), LLM not configured (501),          |
 * |      | a feature the server has not configured (501; API keys without DB auth),       |
 * |      | unavailable / maintenance (503), cannot reach the service, unexpected answer   |
 * | 2    | invalid input: validation (422/400), body too large (413), bad usage or flags, |
 * |      | unreadable input file, bad configuration (SERVICE_* variable)                   |
 * | 3    | not authenticated (401) or not allowed (403)                                    |
 * | 4    | not found (404)                                                                 |
 * | 5    | payment required (402), quota or rate limit reached (429)                       |
 * | 100  | `evaluate`: the score is below --min-score                                      |
 */
export const ExitCode = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  AUTH: 3,
  NOT_FOUND: 4,
  LIMITED: 5,
  BELOW_MIN_SCORE: 100,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODE_HELP = `
Exit codes:
  0    success
  1    failure: server error, conflict, LLM or another feature not configured on the
       server (501; API keys without DB auth), unavailable (503), service unreachable
  2    invalid input: validation error (422), body too large (413), bad usage,
       unreadable input file, bad SERVICE_* configuration
  3    not authenticated (401) or not allowed (403)
  4    not found (404)
  5    payment required (402), quota or rate limit reached (429)
  100  evaluate: score below --min-score`;

/** A local problem with what the user typed (flags, files, stdin). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function exitCodeForStatus(status: number): ExitCode {
  if (status >= 200 && status < 300) return ExitCode.OK;
  if (status === 400 || status === 413 || status === 422) return ExitCode.USAGE;
  if (status === 401 || status === 403) return ExitCode.AUTH;
  if (status === 404) return ExitCode.NOT_FOUND;
  if (status === 402 || status === 429) return ExitCode.LIMITED;
  return ExitCode.FAILURE;
}

/**
 * The service's stable error codes → exit codes: for answers (the status decides only for
 * answers without a code) and for domain errors of services run in-process (their wire code).
 */
const WIRE_EXIT_CODES: Record<WireErrorCode, ExitCode> = {
  bad_request: ExitCode.USAGE,
  validation_failed: ExitCode.USAGE,
  payload_too_large: ExitCode.USAGE,
  unauthenticated: ExitCode.AUTH,
  forbidden: ExitCode.AUTH,
  not_found: ExitCode.NOT_FOUND,
  payment_required: ExitCode.LIMITED,
  quota_exceeded: ExitCode.LIMITED,
  overage_budget_cap_reached: ExitCode.LIMITED,
  rate_limited: ExitCode.LIMITED,
  method_not_allowed: ExitCode.FAILURE,
  conflict: ExitCode.FAILURE,
  internal_error: ExitCode.FAILURE,
  llm_not_configured: ExitCode.FAILURE,
  not_configured: ExitCode.FAILURE,
  bad_gateway: ExitCode.FAILURE,
  service_unavailable: ExitCode.FAILURE,
  maintenance: ExitCode.FAILURE,
  storage_unavailable: ExitCode.FAILURE,
  llm_unavailable: ExitCode.FAILURE,
  embedding_unavailable: ExitCode.FAILURE,
  insufficient_storage: ExitCode.FAILURE,
};

/** Exit code for anything a command may throw (remote answers and local failures alike). */
export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof ApiError) {
    // Outside DB auth mode the key endpoints answer 404; nothing is missing but the server's
    // configuration, so the CLI ends as for any feature the server has not configured.
    if (err.status === 404 && /need DB auth mode/.test(err.detail)) return WIRE_EXIT_CODES.not_configured;
    const code = err.code;
    return code !== null && Object.hasOwn(WIRE_EXIT_CODES, code) ? WIRE_EXIT_CODES[code as WireErrorCode] : exitCodeForStatus(err.status);
  }
  if (err instanceof UsageError || err instanceof ConfigError || err instanceof InvalidUrlError) return ExitCode.USAGE;
  // Local commands (serve, reindex) run services in-process, so domain errors reach us too.
  if (err instanceof DomainError) return WIRE_EXIT_CODES[wireCodeOf(err)];
  if (err instanceof TransportError || err instanceof ProtocolError) return ExitCode.FAILURE;
  return ExitCode.FAILURE;
}
