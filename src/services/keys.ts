import { ConflictError, ForbiddenError, NotFoundError, UnauthenticatedError, ValidationError } from '../core/errors.js';
import { limitsAfterRotation, limitsForNewKey, type KeyLimits } from '../core/key-limits.js';
import { canGrantRole } from '../core/permissions.js';
import type { BootstrapResponse, CreateKeyInput, IssuedKey, KeyInfo, KeyListResponse } from '../contracts/keys.js';
import type { Role, Scope } from '../core/types.js';
import type { ApiKeyRecord, KeyStore } from '../ports/keys.js';
import { generateApiKey, secretsEqual } from './api-key-secrets.js';
import { AuditKind, writeAudit, type RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';

/** Use cases of the API key endpoints (DB auth mode). */
export type KeyDeps = Pick<ServiceDeps, 'config' | 'storage' | 'clock' | 'logger' | 'billing'> & { keyStore: KeyStore };

/** Who is managing keys: the role of the calling key, its scope and its own limits. */
export interface KeyCaller {
  role: Role;
  scope: Scope;
  /** The calling key's expiry and effective quota: what it creates or rotates stays within them. */
  limits: KeyLimits;
}

export const KeyAuditKind = {
  created: 'KEY_CREATED',
  revoked: 'KEY_REVOKED',
  rotated: 'KEY_ROTATED',
} as const;

/** The tenant and project bootstrap creates. */
export const BOOTSTRAP_SCOPE: Scope = { tenant_id: 'default', project_id: 'default' };
const BOOTSTRAP_KEY_NAME = 'bootstrap owner';

/** A key's status at `now` (a revoked key stays revoked after its expiry). */
export function keyStatus(key: Pick<ApiKeyRecord, 'revoked_at' | 'expires_at'>, now: Date): KeyInfo['status'] {
  if (key.revoked_at !== null) return 'revoked';
  if (key.expires_at !== null && Date.parse(key.expires_at) <= now.getTime()) return 'expired';
  return 'active';
}

function toInfo(key: ApiKeyRecord, now: Date): KeyInfo {
  return {
    key_id: key.key_id,
    name: key.name,
    role: key.role,
    prefix: key.prefix,
    project_id: key.project_id,
    created_at: key.created_at,
    expires_at: key.expires_at,
    revoked_at: key.revoked_at,
    max_patterns: key.max_patterns,
    rotated_from: key.rotated_from,
    status: keyStatus(key, now),
  };
}

function scopeOf(key: ApiKeyRecord): Scope {
  return { tenant_id: key.tenant_id, project_id: key.project_id };
}

/**
 * POST /v1/keys/bootstrap: the bootstrap token (compared in constant time) buys the first
 * owner key, once. Unset token → 403; wrong token → 401 (audited); any key exists → 409.
 */
export async function bootstrapOwnerKey(
  deps: KeyDeps,
  token: string,
  ctx: RequestContext,
): Promise<BootstrapResponse> {
  const expected = deps.config.auth.bootstrapToken;
  if (expected === null) {
    throw new ForbiddenError('bootstrap is disabled: the server has no SERVICE_BOOTSTRAP_TOKEN (set it, restart, bootstrap, then remove it)');
  }
  if (!secretsEqual(token, expected)) {
    await writeAudit(deps, AuditKind.authFailed, null, ctx, { reason: 'invalid bootstrap token', path: '/v1/keys/bootstrap' });
    throw new UnauthenticatedError('invalid bootstrap token');
  }
  const generated = generateApiKey();
  const created = await deps.keyStore.tenants.bootstrap({
    ...BOOTSTRAP_SCOPE,
    key: {
      key_id: generated.key_id,
      name: BOOTSTRAP_KEY_NAME,
      role: 'owner',
      hash: generated.hash,
      prefix: generated.prefix,
      max_patterns: null,
      expires_at: null,
      created_at: deps.clock.now().toISOString(),
    },
  });
  if (created === null) {
    throw new ConflictError('already bootstrapped: an API key exists; create further keys with POST /v1/keys, and remove SERVICE_BOOTSTRAP_TOKEN');
  }
  await writeAudit(deps, KeyAuditKind.created, BOOTSTRAP_SCOPE, { ...ctx, actor: 'bootstrap' }, {
    key_id: created.key_id, role: 'owner', via: 'bootstrap',
  });
  return { key_id: created.key_id, secret: generated.secret, role: 'owner', ...BOOTSTRAP_SCOPE };
}

/** POST /v1/keys: role hierarchy enforced (a key creates keys up to its own role). */
export async function createKey(deps: KeyDeps, caller: KeyCaller, input: CreateKeyInput, ctx: RequestContext): Promise<IssuedKey> {
  if (!canGrantRole(caller.role, input.role)) {
    throw new ForbiddenError(`a ${caller.role} key cannot create ${input.role} keys: keys can be created up to the creator's own role`);
  }
  const projectId = input.project_id ?? caller.scope.project_id;
  if (projectId !== caller.scope.project_id && caller.role !== 'owner') {
    throw new ForbiddenError('only owner keys can create keys for another project');
  }
  const now = deps.clock.now();
  if (input.expires_at !== undefined && Date.parse(input.expires_at) <= now.getTime()) {
    throw new ValidationError('invalid body: expires_at: must be in the future', [{ path: 'expires_at', message: 'must be in the future' }]);
  }
  const granted = limitsForNewKey(caller.limits, input);
  if ('exceeds' in granted) {
    throw new ValidationError(`invalid body: ${granted.exceeds}: ${granted.message}`, [{ path: granted.exceeds, message: granted.message }]);
  }
  const scope = { tenant_id: caller.scope.tenant_id, project_id: projectId };
  await deps.billing?.checkNewProject(caller.scope, projectId);
  const generated = generateApiKey();
  const created = await deps.keyStore.keys.create(scope, {
    key_id: generated.key_id,
    name: input.name,
    role: input.role,
    hash: generated.hash,
    prefix: generated.prefix,
    // Within the creator's; expires_at normalised to UTC like every stored time.
    ...granted.limits,
    created_at: now.toISOString(),
  });
  await writeAudit(deps, KeyAuditKind.created, scope, ctx, {
    key_id: created.key_id, role: created.role, max_patterns: created.max_patterns, expires_at: created.expires_at,
  });
  return { ...toInfo(created, now), secret: generated.secret };
}

/** GET /v1/keys: the keys of the caller's project. */
export async function listKeys(deps: KeyDeps, scope: Scope): Promise<KeyListResponse> {
  const now = deps.clock.now();
  const keys = (await deps.keyStore.keys.list(scope)).map((k) => toInfo(k, now));
  return { keys, count: keys.length };
}

/** The caller may manage (revoke, rotate) a key only up to its own role, like creating one. */
async function manageableKey(deps: KeyDeps, caller: KeyCaller, keyId: string, verb: string): Promise<ApiKeyRecord> {
  const key = await deps.keyStore.keys.get(caller.scope, keyId);
  if (!key) throw new NotFoundError(`API key ${keyId} not found in this project`);
  if (!canGrantRole(caller.role, key.role)) throw new ForbiddenError(`a ${caller.role} key cannot ${verb} ${key.role} keys`);
  return key;
}

/** DELETE /v1/keys/{id}: effective at once on every server process (keys are looked up per request). */
export async function revokeKey(deps: KeyDeps, caller: KeyCaller, keyId: string, ctx: RequestContext): Promise<KeyInfo> {
  await manageableKey(deps, caller, keyId, 'revoke');
  const now = deps.clock.now();
  const result = await deps.keyStore.keys.revoke(caller.scope, keyId, now.toISOString());
  if (!result) throw new NotFoundError(`API key ${keyId} not found in this project`);
  // A second revocation is refused, so a script cannot believe it revoked a key that a typo
  // (or a rotation it did not know about) left live.
  if (!result.changed) throw new ConflictError(`API key ${keyId} is already revoked (since ${result.key.revoked_at})`);
  await writeAudit(deps, KeyAuditKind.revoked, scopeOf(result.key), ctx, { key_id: keyId, role: result.key.role });
  return toInfo(result.key, now);
}

/**
 * POST /v1/keys/{id}/rotate: the same key gets a new secret (and display prefix); the old
 * secret stops working at once. Scripts and dashboards keep referring to the same key id. The
 * key keeps its expiry and quota, tightened to the rotating key's (its caller gets the secret).
 */
export async function rotateKey(deps: KeyDeps, caller: KeyCaller, keyId: string, ctx: RequestContext): Promise<IssuedKey> {
  const now = deps.clock.now();
  const current = await manageableKey(deps, caller, keyId, 'rotate');
  if (keyStatus(current, now) === 'expired') throw new ConflictError(`API key ${keyId} has expired: create a new key instead`);
  const generated = generateApiKey();
  const limits = limitsAfterRotation(current, caller.limits);
  const result = await deps.keyStore.keys.rotate(caller.scope, keyId, { hash: generated.hash, prefix: generated.prefix }, limits);
  if (result === null) throw new NotFoundError(`API key ${keyId} not found in this project`);
  if (result === 'conflict') throw new ConflictError(`API key ${keyId} is revoked: only active keys can be rotated`);
  await writeAudit(deps, KeyAuditKind.rotated, scopeOf(result), ctx, { key_id: keyId, role: result.role });
  return { ...toInfo(result, now), secret: generated.secret };
}
