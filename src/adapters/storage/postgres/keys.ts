import type { Config } from '../../../config/index.js';
import type { Role, Scope } from '../../../core/types.js';
import type { ApiKeyRecord, KeyCredential, KeyRepository, KeyScope, KeyStore, NewApiKey, ProvisionInput, TenantRepository } from '../../../ports/keys.js';
import { noopInstruments, silentLogger, type Instruments, type Logger } from '../../../ports/observability.js';
import { assertSchemaCurrent } from '../../migrations/index.js';
import { Db, type Queryer } from './db.js';
import { createAuditRepository } from './global.js';
import { checkOnPool, createServicePool, type PostgresPool } from './pool.js';
import { iso } from './rows.js';

const KEY_COLUMNS = 'id, tenant_id, project_id, name, role, prefix, max_patterns, expires_at, revoked_at, created_at, rotated_from';
const PREFIXED_KEY_COLUMNS = KEY_COLUMNS.split(', ').map((c) => `k.${c}`).join(', ');

interface KeyRow {
  id: string;
  tenant_id: string;
  project_id: string;
  name: string;
  role: Role;
  prefix: string;
  max_patterns: number | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
  rotated_from: string | null;
}

function rowToKey(r: KeyRow): ApiKeyRecord {
  return {
    key_id: r.id,
    tenant_id: r.tenant_id,
    project_id: r.project_id,
    name: r.name,
    role: r.role,
    prefix: r.prefix,
    max_patterns: r.max_patterns,
    expires_at: iso(r.expires_at),
    revoked_at: iso(r.revoked_at),
    created_at: iso(r.created_at),
    rotated_from: r.rotated_from,
  };
}

// $2 is the project, or null for every project of the tenant ($1).
const IN_PROJECT = '($2::text IS NULL OR project_id = $2)';

// Key ids are UUIDs; anything else can never match, and PostgreSQL would reject it as a uuid.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function insertKey(q: Queryer, scope: Scope, key: NewApiKey, rotatedFrom: string | null = null): Promise<ApiKeyRecord> {
  const res = await q.query<KeyRow>(
    `INSERT INTO api_keys (id, tenant_id, project_id, name, key_hash, prefix, role, max_patterns, expires_at, created_at, rotated_from)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${KEY_COLUMNS}`,
    [key.key_id, scope.tenant_id, scope.project_id, key.name, key.hash, key.prefix, key.role, key.max_patterns, key.expires_at, key.created_at, rotatedFrom],
  );
  return rowToKey(res.rows[0]);
}

async function ensureTenantAndProject(q: Queryer, tenantId: string, projectId: string): Promise<void> {
  await q.query('INSERT INTO tenants (id, name) VALUES ($1, $1) ON CONFLICT (id) DO NOTHING', [tenantId]);
  await q.query('INSERT INTO projects (tenant_id, id, name) VALUES ($1, $2, $2) ON CONFLICT (tenant_id, id) DO NOTHING', [tenantId, projectId]);
}

/**
 * The scope's key, row-locked until the transaction ends: concurrent revocations and
 * rotations of one key serialise, and the second one sees the first one's result.
 */
async function selectForUpdate(q: Queryer, scope: KeyScope, keyId: string): Promise<KeyRow | null> {
  const res = await q.query<KeyRow>(
    `SELECT ${KEY_COLUMNS} FROM api_keys WHERE tenant_id = $1 AND ${IN_PROJECT} AND id = $3 FOR UPDATE`,
    [scope.tenant_id, scope.project_id ?? null, keyId],
  );
  return res.rows[0] ?? null;
}

export function createKeyRepository(db: Db): KeyRepository {
  return {
    async findByHash(hash) {
      // One indexed lookup (api_keys.key_hash is UNIQUE) joined with the project's quota.
      const res = await db.query<KeyRow & { key_hash: Buffer; project_max_patterns: number | null }>(
        `SELECT ${PREFIXED_KEY_COLUMNS}, k.key_hash, p.max_patterns AS project_max_patterns
         FROM api_keys k JOIN projects p ON p.tenant_id = k.tenant_id AND p.id = k.project_id
         WHERE k.key_hash = $1`,
        [hash],
        'keys.find',
      );
      const row = res.rows[0];
      if (!row) return null;
      const credential: KeyCredential = { ...rowToKey(row), hash: row.key_hash, project_max_patterns: row.project_max_patterns };
      return credential;
    },

    async create(scope, key) {
      return db.tx('keys.create', async (q) => {
        await q.query('INSERT INTO projects (tenant_id, id, name) VALUES ($1, $2, $2) ON CONFLICT (tenant_id, id) DO NOTHING', [scope.tenant_id, scope.project_id]);
        return insertKey(q, scope, key);
      });
    },

    async list(scope) {
      const res = await db.query<KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE tenant_id = $1 AND ${IN_PROJECT} ORDER BY created_at, id`,
        [scope.tenant_id, scope.project_id ?? null],
        'keys.list',
      );
      return res.rows.map(rowToKey);
    },

    async get(scope, keyId) {
      if (!UUID.test(keyId)) return null;
      const res = await db.query<KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE tenant_id = $1 AND ${IN_PROJECT} AND id = $3`,
        [scope.tenant_id, scope.project_id ?? null, keyId],
        'keys.get',
      );
      return res.rows[0] ? rowToKey(res.rows[0]) : null;
    },

    async revoke(scope, keyId, at) {
      if (!UUID.test(keyId)) return null;
      return db.tx('keys.revoke', async (q) => {
        const found = await selectForUpdate(q, scope, keyId);
        if (!found) return null;
        // Revoking twice keeps the first revocation time.
        if (found.revoked_at !== null) return { key: rowToKey(found), changed: false };
        const res = await q.query<KeyRow>(`UPDATE api_keys SET revoked_at = $2 WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId, at]);
        return { key: rowToKey(res.rows[0]), changed: true };
      });
    },

    async revokeAll(target, at) {
      const res = await db.query(
        `UPDATE api_keys SET revoked_at = $3
         WHERE tenant_id = $1 AND ($2::text IS NULL OR project_id = $2) AND revoked_at IS NULL`,
        [target.tenant_id, target.project_id ?? null, at],
        'keys.revokeAll',
      );
      return res.rowCount ?? 0;
    },

    async countActive(target) {
      const res = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM api_keys
         WHERE tenant_id = $1 AND ($2::text IS NULL OR project_id = $2) AND revoked_at IS NULL`,
        [target.tenant_id, target.project_id ?? null],
        'keys.countActive',
      );
      return res.rows[0].n;
    },

    async rotate(scope, keyId, secret, limits) {
      if (!UUID.test(keyId)) return null;
      return db.tx('keys.rotate', async (q) => {
        const current = await selectForUpdate(q, scope, keyId);
        if (!current) return null;
        if (current.revoked_at !== null) return 'conflict' as const;
        // The digest is replaced in place: the old secret has no row left to match, at once.
        const res = await q.query<KeyRow>(
          `UPDATE api_keys SET key_hash = $2, prefix = $3, max_patterns = $4, expires_at = $5 WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
          [keyId, secret.hash, secret.prefix, limits.max_patterns, limits.expires_at],
        );
        return rowToKey(res.rows[0]);
      });
    },
  };
}

export function createTenantRepository(db: Db): TenantRepository {
  return {
    async bootstrap(input: ProvisionInput) {
      return db.tx('keys.bootstrap', async (q) => {
        // SHARE ROW EXCLUSIVE conflicts with itself and with every INSERT into api_keys, so
        // concurrent bootstraps (from any number of server processes) run one after another,
        // and under READ COMMITTED the check below sees whatever the previous one committed.
        await q.query('LOCK TABLE api_keys IN SHARE ROW EXCLUSIVE MODE');
        const taken = await q.query<{ taken: boolean }>('SELECT EXISTS (SELECT 1 FROM api_keys) AS taken');
        if (taken.rows[0].taken) return null;
        await ensureTenantAndProject(q, input.tenant_id, input.project_id);
        return insertKey(q, input, input.key);
      });
    },

    async provision(input: ProvisionInput) {
      return db.tx('keys.provision', async (q) => {
        await ensureTenantAndProject(q, input.tenant_id, input.project_id);
        return insertKey(q, input, input.key);
      });
    },

    async anyKeyExists() {
      const res = await db.query<{ taken: boolean }>('SELECT EXISTS (SELECT 1 FROM api_keys) AS taken', [], 'keys.exists');
      return res.rows[0].taken;
    },
  };
}

export interface PostgresKeyStoreOptions {
  instruments?: Instruments;
  logger?: Logger;
  /** Folder of migrations the schema must match (default: the package's migrations/). */
  migrationsDir?: string;
  /**
   * The process's shared pool (src/app.ts): with PostgreSQL storage the keys use the storage's
   * pool, and ending it is left to its owner. Without one the key store opens its own.
   */
  pool?: PostgresPool;
}

/**
 * The key store of DB auth mode (the pattern storage may even be JSON). Refuses to start
 * unless the schema is current, like the pattern storage.
 */
export async function createPostgresKeyStore(config: Config, opts: PostgresKeyStoreOptions = {}): Promise<KeyStore> {
  if (!config.storage.databaseUrl) throw new Error('SERVICE_DATABASE_URL is required for DB auth mode (API keys live in PostgreSQL)');
  const ownsPool = !opts.pool;
  const pool = opts.pool ?? createServicePool(config, { logger: opts.logger ?? silentLogger, search: false });
  await checkOnPool(pool, ownsPool, config.storage.databaseUrl, () => assertSchemaCurrent(pool, { dir: opts.migrationsDir }));
  const db = new Db(pool, opts.instruments ?? noopInstruments, opts.logger ?? silentLogger);
  let closed = false;
  return {
    keys: createKeyRepository(db),
    tenants: createTenantRepository(db),
    audit: createAuditRepository(db),
    async close() {
      if (closed) return;
      closed = true;
      if (ownsPool) await pool.end();
    },
  };
}
