import { ConfigError } from '../../src/config/env-readers.js';
import { ExitCode, codesForStatus, errorRow, isWireErrorCode, wireCodeForStatus } from '../../src/core/error-table.js';
import { DomainError } from '../../src/core/errors.js';
import { ApiError, InvalidUrlError, ProtocolError, TransportError } from '../../src/client/index.js';

/**
 * The CLI's exit codes. Every command ends with one of these; scripts can rely on them. Which
 * error ends with which is the `exit` column of the error table (src/core/error-table.ts);
 * local failures (usage, configuration, unreachable service) are decided here. (Summed up in
 * docs/cli.md and at the end of `service --help`.)
 */
export { ExitCode };

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
  100  evaluate: the gate failed (score below --min-score, a --fail-on-* gate, an
       evaluator failure, a baseline case missing)
  101  evaluate --baseline: the gate held but a case regressed against the baseline`;

/** A local problem with what the user typed (flags, files, stdin). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Exit code for an answer that carries no known code: the row its status stands for. */
export function exitCodeForStatus(status: number): ExitCode {
  if (status >= 200 && status < 300) return ExitCode.OK;
  return codesForStatus(status).length > 0 ? errorRow(wireCodeForStatus(status)).exit : ExitCode.FAILURE;
}

/** Exit code for anything a command may throw (remote answers and local failures alike). */
export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof ApiError) {
    // Outside DB auth mode the key endpoints answer 404; nothing is missing but the server's
    // configuration, so the CLI ends as for any feature the server has not configured.
    if (err.status === 404 && /need DB auth mode/.test(err.detail)) return errorRow('not_configured').exit;
    const code = err.code;
    return isWireErrorCode(code) ? errorRow(code).exit : exitCodeForStatus(err.status);
  }
  if (err instanceof UsageError || err instanceof ConfigError || err instanceof InvalidUrlError) return ExitCode.USAGE;
  // Local commands (serve, reindex) run services in-process, so domain errors reach us too.
  if (err instanceof DomainError) return errorRow(err.code).exit;
  if (err instanceof TransportError || err instanceof ProtocolError) return ExitCode.FAILURE;
  return ExitCode.FAILURE;
}
