/**
 * Governance deletion in PostgreSQL, table by table: after deleting a project (then a tenant),
 * no table holds a row of the target (keys stay as revoked rows, audit rows stay without
 * detail, the projects/tenants rows stay without retention), and the neighbouring project and
 * tenant keep every row they had. A failing statement rolls the whole deletion back.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import type { Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { createMigratedSchema, createTestDatabase, pgConfig, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';
import { populateScope } from '../contract/storage.contract.governance.js';

const hasPg = await requirePostgres('governance deletion on PostgreSQL');

const A: Scope = { tenant_id: 'tenant-a', project_id: 'default' };
const B: Scope = { tenant_id: 'tenant-a', project_id: 'other_project' };
const C: Scope = { tenant_id: 'tenant-c', project_id: 'default' };
const OPTS = { at: '2026-01-01T00:00:00.000Z', keepRunningOperations: ['governance_delete'] };

/** Every table with tenant-scoped rows that must be empty for a deleted target. */
const DATA_TABLES = [
  'patterns', 'eval_observations', 'pattern_skills', 'feedback_clusters', 'metrics_counters', 'roi_events',
  'analytics_rollups', 'pattern_counts', 'jobs', 'evaluation_runs', 'evaluation_cases',
];

describe.skipIf(!hasPg)('PostgreSQL governance deletion, table by table', () => {
  let db: TestDatabase;
  let schema: TestSchema;
  let storage: Storage;
  let sql: pg.Pool;

  const rowsOf = async (table: string, scope: { tenant_id: string; project_id?: string }) => {
    const res = await sql.query(
      `SELECT * FROM ${table} WHERE tenant_id = $1 AND ($2::text IS NULL OR project_id = $2) ORDER BY 1, 2, 3`,
      [scope.tenant_id, scope.project_id ?? null],
    );
    return res.rows;
  };
  const snapshot = async (scope: Scope) => {
    const out: Record<string, unknown[]> = {};
    for (const table of [...DATA_TABLES, 'api_keys', 'audit_log']) out[table] = await rowsOf(table, scope);
    out.projects = (await sql.query('SELECT * FROM projects WHERE tenant_id = $1 AND id = $2', [scope.tenant_id, scope.project_id])).rows;
    return out;
  };

  beforeAll(async () => {
    db = await createTestDatabase('gov_delete');
    schema = await createMigratedSchema(db, 'gov');
    storage = await createPostgresStorage(pgConfig(schema.url));
    sql = new pg.Pool({ connectionString: schema.url, max: 2 });
    for (const t of ['tenant-a', 'tenant-c']) await sql.query('INSERT INTO tenants (id) VALUES ($1)', [t]);
    for (const [i, s] of [A, B, C].entries()) {
      await sql.query('INSERT INTO projects (tenant_id, id, retention_days) VALUES ($1, $2, 30)', [s.tenant_id, s.project_id]);
      await sql.query(
        `INSERT INTO api_keys (id, tenant_id, project_id, name, key_hash, prefix, role)
         VALUES (gen_random_uuid(), $1, $2, 'k', $3, 'svc_x', 'admin')`,
        [s.tenant_id, s.project_id, Buffer.from(`hash-${i}`)],
      );
      await populateScope(storage, s, i * 100);
    }
    await sql.query("UPDATE tenants SET retention_days = 90 WHERE id = 'tenant-a'");
    await sql.query("INSERT INTO usage_counters (tenant_id, period_start, metric, value) VALUES ('tenant-a', '2026-01-01', 'eval_runs', 3), ('tenant-c', '2026-01-01', 'eval_runs', 4)");
  });
  afterAll(async () => {
    await sql?.end();
    await storage?.close();
    await db?.drop();
  });

  it('a failing deletion changes nothing (one transaction)', async () => {
    const before = await snapshot(A);
    // Make the last statement of the cascade (the audit scrub) fail.
    await sql.query(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
    await sql.query('CREATE TRIGGER refuse BEFORE UPDATE ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse()');
    try {
      await expect(storage.governance.deleteScope({ ...A }, OPTS)).rejects.toThrow();
    } finally {
      await sql.query('DROP TRIGGER refuse ON audit_log');
      await sql.query('DROP FUNCTION refuse()');
    }
    expect(await snapshot(A)).toEqual(before);
  });

  it('deleting a project empties every table of it; the sibling project and the other tenant keep theirs', async () => {
    const b = await snapshot(B);
    const c = await snapshot(C);
    const counts = await storage.governance.deleteScope({ ...A }, OPTS);
    expect(counts).toEqual({ patterns_deleted: 5, jobs_deleted: 1, projects_deleted: 1, keys_revoked: 1 });
    for (const table of DATA_TABLES) expect(await rowsOf(table, A), table).toEqual([]);
    const keys = await rowsOf('api_keys', A);
    expect(keys).toHaveLength(1);
    expect(keys[0].revoked_at).toEqual(new Date(OPTS.at));
    const audit = await rowsOf('audit_log', A);
    expect(audit.length).toBeGreaterThan(0);
    for (const e of audit) expect([e.detail, e.ip]).toEqual([{}, null]);
    const project = (await sql.query('SELECT retention_days FROM projects WHERE tenant_id = $1 AND id = $2', [A.tenant_id, A.project_id])).rows;
    expect(project).toEqual([{ retention_days: null }]);
    expect(await snapshot(B)).toEqual(b);
    expect(await snapshot(C)).toEqual(c);
  });

  it('deleting a tenant empties every table of all its projects and its tenant-level rows', async () => {
    const c = await snapshot(C);
    const counts = await storage.governance.deleteScope({ tenant_id: 'tenant-a', project_id: null }, OPTS);
    expect(counts).toEqual({ patterns_deleted: 5, jobs_deleted: 1, projects_deleted: 2, keys_revoked: 1 });
    for (const table of DATA_TABLES) expect(await rowsOf(table, { tenant_id: 'tenant-a' }), table).toEqual([]);
    expect((await sql.query("SELECT count(*)::int AS n FROM usage_counters WHERE tenant_id = 'tenant-a'")).rows[0].n).toBe(0);
    expect((await sql.query("SELECT retention_days FROM tenants WHERE id = 'tenant-a'")).rows).toEqual([{ retention_days: null }]);
    expect((await sql.query("SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = 'tenant-a' AND revoked_at IS NULL")).rows[0].n).toBe(0);
    expect((await sql.query("SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = 'tenant-a' AND detail <> '{}'::jsonb")).rows[0].n).toBe(0);
    expect(await snapshot(C)).toEqual(c);
    expect((await sql.query("SELECT value::int AS v FROM usage_counters WHERE tenant_id = 'tenant-c'")).rows).toEqual([{ v: 4 }]);
  });
});
