import type { Role, Scope } from '../core/types.js';
import type { AuditRepository } from './storage.js';

/**
 * Multi-tenant API keys (DB auth mode only). A key belongs to one tenant and one project and
 * carries a role, an optional pattern quota and an optional expiry. Only the SHA-256 of its
 * secret is ever stored; `prefix` (the first 12 characters of the secret) is kept for display.
 */
export interface ApiKeyRecord {
  key_id: string;
  tenant_id: string;
  project_id: string;
  name: string;
  role: Role;
  prefix: string;
  /** The key's own quota; null inherits the project's (projects.max_patterns). */
  max_patterns: number | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  /** The key this one replaced by rotation. */
  rotated_from: string | null;
}

/** A key about to be stored: its digest, never its secret. */
export interface NewApiKey {
  key_id: string;
  name: string;
  role: Role;
  hash: Buffer;
  prefix: string;
  max_patterns: number | null;
  expires_at: string | null;
  created_at: string;
}

/** What authentication needs: the record, its stored digest and the project's quota. */
export interface KeyCredential extends ApiKeyRecord {
  hash: Buffer;
  project_max_patterns: number | null;
}

export interface KeyRepository {
  /** The key whose stored digest equals `hash` (revoked and expired ones included), or null. */
  findByHash(hash: Buffer): Promise<KeyCredential | null>;
  /**
   * Stores a key in `scope`. The tenant must exist; the project row is created when missing
   * (key creation is how a tenant gets further projects).
   */
  create(scope: Scope, key: NewApiKey): Promise<ApiKeyRecord>;
  /** Keys of the scope, oldest first (revoked ones included). */
  list(scope: Scope): Promise<ApiKeyRecord[]>;
  /** One key of the scope, or null (another scope's key is null too). */
  get(scope: Scope, keyId: string): Promise<ApiKeyRecord | null>;
  /** Sets revoked_at unless already set; null when the key is not in the scope. */
  revoke(scope: Scope, keyId: string, at: string): Promise<{ key: ApiKeyRecord; changed: boolean } | null>;
  /**
   * Governance deletion (docs/behavior.md "Governance"): revokes every still-active key of a tenant,
   * or of one of its projects. The rows stay (as revoked). Returns how many were revoked.
   */
  revokeAll(target: { tenant_id: string; project_id?: string }, at: string): Promise<number>;
  /**
   * Gives an active key a new secret: the same key id, name and role with a new digest and
   * display prefix, so the old secret stops matching at once, and the given quota and expiry
   * (its own, or tighter). `conflict` when the key is revoked; null when it is not in the scope.
   */
  rotate(
    scope: Scope,
    keyId: string,
    secret: Pick<NewApiKey, 'hash' | 'prefix'>,
    limits: Pick<NewApiKey, 'max_patterns' | 'expires_at'>,
  ): Promise<ApiKeyRecord | 'conflict' | null>;
  /** How many still-active keys revokeAll would revoke now (dry runs). */
  countActive(target: { tenant_id: string; project_id?: string }): Promise<number>;
}

export interface ProvisionInput {
  tenant_id: string;
  project_id: string;
  key: NewApiKey;
}

export interface TenantRepository {
  /**
   * The first owner key: in ONE transaction, and only while no API key exists at all, creates
   * the tenant, the project and the key. Race-safe: of concurrent calls exactly one succeeds;
   * the others (and every later call) get null.
   */
  bootstrap(input: ProvisionInput): Promise<ApiKeyRecord | null>;
  /** Creates the tenant and project when missing and stores the key, in one transaction (operators, tests). */
  provision(input: ProvisionInput): Promise<ApiKeyRecord>;
  /** True once any API key (even a revoked one) exists. */
  anyKeyExists(): Promise<boolean>;
}

/** The key and tenant repositories of DB auth mode, with their own connections. */
export interface KeyStore {
  readonly keys: KeyRepository;
  readonly tenants: TenantRepository;
  /** The audit table of the same database (DB mode writes its audit log there). */
  readonly audit: AuditRepository;
  close(): Promise<void>;
}
