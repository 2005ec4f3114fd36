import type { Scope } from '../core/types.js';
import type { RedactionCounts } from '../core/redaction.js';
import type { ServiceDeps } from './deps.js';

/**
 * Who is asking, for audit events. Services never see HTTP objects; the server (or a job
 * runner, or the CLI) fills this in.
 */
export interface RequestContext {
  /** Key id, 'env', 'dev', an OIDC subject; never a secret. */
  actor: string | null;
  request_id: string | null;
  ip: string | null;
  /** A key's pattern quota (null: none). */
  max_patterns?: number | null;
}

export const systemContext: RequestContext = { actor: 'system', request_id: null, ip: null };

/** Kinds of audit events written by the memory services and the HTTP edge. Audit details name
 * keys by key_id only: no part of a key (not even its display prefix) reaches the log. */
export const AuditKind = {
  piiRedacted: 'PII_REDACTED',
  authFailed: 'AUTH_FAILED',
  rateLimited: 'RATE_LIMITED',
  patternDeleted: 'PATTERN_DELETED',
  dataExported: 'DATA_EXPORTED',
  dataImported: 'DATA_IMPORTED',
} as const;

/**
 * Appends one audit event to the audit table and writes it as one structured log line
 * (`msg: "audit"`, the event under `audit`), so log pipelines see security events without
 * querying storage. An audit write that fails is logged, not thrown: the operation it
 * describes already happened (or was already refused), and failing the request would hide that.
 */
export async function writeAudit(
  deps: Pick<ServiceDeps, 'storage' | 'clock' | 'logger'>,
  kind: string,
  scope: Scope | null,
  ctx: RequestContext,
  detail: Record<string, unknown>,
): Promise<void> {
  const event = {
    at: deps.clock.now().toISOString(),
    kind,
    tenant_id: scope?.tenant_id ?? null,
    project_id: scope?.project_id ?? null,
    actor: ctx.actor,
    request_id: ctx.request_id,
    ip: ctx.ip,
    detail,
  };
  deps.logger.info({ audit: event }, 'audit');
  try {
    await deps.storage.audit.append(event);
  } catch (err) {
    deps.logger.error({ err, kind }, 'audit event could not be written');
  }
}

/** PII_REDACTED with counts per kind; never the redacted values. */
export function auditRedaction(
  deps: Pick<ServiceDeps, 'storage' | 'clock' | 'logger'>,
  scope: Scope,
  ctx: RequestContext,
  counts: RedactionCounts,
  operation: string,
): Promise<void> {
  const total = Object.values(counts).reduce<number>((sum, n) => sum + (n ?? 0), 0);
  return writeAudit(deps, AuditKind.piiRedacted, scope, ctx, { operation, counts, total });
}
