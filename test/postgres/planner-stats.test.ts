/**
 * Planner statistics: the storage keeps `patterns` (and the keyword postings written with it,
 * migration 0008) analyzed by itself, so vector search walks the HNSW index even on a server
 * whose autovacuum is off or has not come round yet.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { buildSearchStatement } from '../../src/adapters/storage/postgres/search.js';
import type { PatternRecord, Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { createMigratedSchema, createTestDatabase, pgConfig, requirePostgres, type TestDatabase } from '../support/pg.js';

const hasPg = await requirePostgres('planner statistics');

const SCOPE: Scope = { tenant_id: 'big', project_id: 'p' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function record(id: string): PatternRecord {
  const at = '2025-03-01T00:00:00.000Z';
  return {
    id, task: `task ${id}`, code: 'code', output: null, eval_score: 7, success_score: 7, reuse_count: 0, run_id: null,
    classification: 'internal', source: 'api', author: null, expires_at: null, redacted: false,
    created_at: at, updated_at: at, last_aged_at: null,
  };
}

interface TableStats {
  analyzed: number;
  reltuples: number;
  modified: number;
}

async function tableStats(pool: pg.Pool): Promise<TableStats> {
  const res = await pool.query<{ analyzed: string; reltuples: number; modified: string }>(
    `SELECT s.analyze_count + s.autoanalyze_count AS analyzed, c.reltuples::float8 AS reltuples,
            s.n_mod_since_analyze AS modified
     FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = 'patterns'::regclass`,
  );
  const r = res.rows[0];
  return { analyzed: Number(r.analyzed), reltuples: r.reltuples, modified: Number(r.modified) };
}

/**
 * Polls until `check` holds (the statistics work runs in the background). The bound is
 * generous (30 s) so a busy CI box only makes the wait longer, never the test fail.
 */
async function eventually(pool: pg.Pool, check: (s: TableStats) => boolean, what: string): Promise<TableStats> {
  let last: TableStats | null = null;
  for (let i = 0; i < 300; i++) {
    last = await tableStats(pool);
    if (check(last)) return last;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}; last statistics: ${JSON.stringify(last)}`);
}

async function plan(pool: pg.Pool, vector: Float32Array): Promise<string> {
  const stmt = buildSearchStatement(SCOPE, vector, 20);
  const client = await pool.connect();
  try {
    await client.query(`BEGIN; ${stmt.setup}`);
    const res = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${stmt.sql}`, stmt.params);
    await client.query('COMMIT');
    return res.rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    client.release();
  }
}

describe.skipIf(!hasPg)('planner statistics of patterns (PostgreSQL)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('planner_stats');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('a storage opened on a table bulk-loaded behind its back analyzes it, and search then walks the HNSW index', async () => {
    const schema = await createMigratedSchema(db, 'stale');
    const pool = new pg.Pool({ connectionString: schema.url, max: 2 });
    let storage: Storage | null = null;
    try {
      // Nothing else may analyze the table during the test (CI's server may run autovacuum).
      await pool.query('ALTER TABLE patterns SET (autovacuum_enabled = false)');
      // 3,000 patterns of one scope plus a few of another, loaded with plain SQL and never analyzed.
      // (Index dropped during the load and re-created after: same index, built faster.)
      const def = (await pool.query<{ d: string }>("SELECT pg_get_indexdef('patterns_embedding_384_hnsw'::regclass) AS d")).rows[0].d;
      await pool.query('DROP INDEX patterns_embedding_384_hnsw');
      await pool.query(`
        SELECT setseed(0.17);
        INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
        SELECT CASE WHEN g <= 3000 THEN 'big' ELSE 'small' END, 'p', 'x' || g, 'task ' || g, 'code', 7, 7, now(), now(), 384,
               (SELECT array_agg(random()::real - 0.5) FROM generate_series(1, 384) WHERE g > 0)::vector
        FROM generate_series(1, 3010) g`);
      await pool.query(`SET maintenance_work_mem = '256MB'; ${def}`);
      const before = await eventually(pool, (s) => s.modified >= 3010, 'the server to count the bulk load');
      expect(before.analyzed).toBe(0);
      const probe = Float32Array.from({ length: 384 }, (_, i) => Math.sin(i));
      // Without column statistics the planner takes the scope for a handful of rows and sorts it.
      expect(await plan(pool, probe)).not.toMatch(/Index Scan using patterns_embedding_384_hnsw/);

      storage = await createPostgresStorage(pgConfig(schema.url));
      const after = await eventually(pool, (s) => s.analyzed > 0, 'ANALYZE at startup');
      expect(after.reltuples).toBe(3010);
      expect(await plan(pool, probe)).toMatch(/Index Scan using patterns_embedding_384_hnsw/);
      expect(await storage.patterns.search(SCOPE, probe, 5)).toHaveLength(5);
    } finally {
      await storage?.close();
      await pool.end();
      await schema.drop();
    }
  }, 90_000);

  it('writes through the storage re-analyze the table once 50 rows + 10% of it changed', async () => {
    const schema = await createMigratedSchema(db, 'writes');
    const pool = new pg.Pool({ connectionString: schema.url, max: 1 });
    let storage: Storage | null = null;
    try {
      await pool.query('ALTER TABLE patterns SET (autovacuum_enabled = false)');
      storage = await createPostgresStorage(pgConfig(schema.url));
      const v = Float32Array.from({ length: 8 }, (_, i) => i + 1);
      // 49 changes stay below the threshold of an empty table (50).
      for (let i = 0; i < 49; i++) await storage.patterns.insert(SCOPE, record(`a${i}`), v);
      await sleep(300);
      expect((await tableStats(pool)).analyzed).toBe(0);

      await storage.patterns.insert(SCOPE, record('a49'), v);
      const first = await eventually(pool, (s) => s.analyzed === 1, 'ANALYZE after 50 inserts');
      expect(first.reltuples).toBe(50);

      // Next threshold: 50 + 10% of 50 = 55 changes; updates, reuses and deletes count too.
      for (let i = 0; i < 20; i++) await storage.patterns.update(SCOPE, { ...record(`a${i}`), success_score: 9 });
      await storage.patterns.recordReuse(SCOPE, Array.from({ length: 30 }, (_, i) => `a${i}`), 0.1, '2025-03-02T00:00:00.000Z');
      for (let i = 0; i < 4; i++) await storage.patterns.delete(SCOPE, `a${40 + i}`);
      await sleep(300);
      expect((await tableStats(pool)).analyzed).toBe(1);
      await storage.patterns.delete(SCOPE, 'a44');
      const second = await eventually(pool, (s) => s.analyzed === 2, 'ANALYZE after 55 more changes');
      expect(second.reltuples).toBe(45);
    } finally {
      await storage?.close();
      await pool.end();
      await schema.drop();
    }
  }, 90_000);

  it('a bulk load leaves the keyword postings stale even when patterns was analyzed: opening a storage analyzes them', async () => {
    const schema = await createMigratedSchema(db, 'postings');
    const pool = new pg.Pool({ connectionString: schema.url, max: 2 });
    let storage: Storage | null = null;
    const postingsRows = async () => (await pool.query<{ n: number }>(
      "SELECT c.reltuples::float8 AS n FROM pg_class c WHERE c.oid = 'recall_postings'::regclass",
    )).rows[0].n;
    try {
      await pool.query('ALTER TABLE patterns SET (autovacuum_enabled = false)');
      await pool.query('ALTER TABLE recall_postings SET (autovacuum_enabled = false)');
      // 300 patterns of 5 distinct task terms and 1 code term each: 1,800 posting rows, written by
      // the insert trigger (the code is a second keyword field).
      await pool.query(
        `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
         SELECT 'big', 'p', 'b' || g, 'parse csv file number ' || g, 'c', 5, 5, now(), now(), 3, '[1,0,0]' FROM generate_series(1, 300) g`,
      );
      // A loader that analyzes what it loaded, as the benchmark's COPY fill does, knows nothing of the postings.
      await pool.query('ANALYZE patterns');
      expect(await postingsRows()).toBeLessThanOrEqual(0);
      // The server counts the load's rows once the writing backend reports them.
      const counted = async () => Number((await pool.query<{ n: string }>(
        "SELECT n_mod_since_analyze AS n FROM pg_stat_user_tables WHERE relid = 'recall_postings'::regclass",
      )).rows[0]?.n ?? 0);
      for (let i = 0; i < 300 && (await counted()) < 1800; i++) await sleep(100);
      expect(await counted()).toBe(1800);

      storage = await createPostgresStorage(pgConfig(schema.url));
      for (let i = 0; i < 300 && (await postingsRows()) !== 1800; i++) await sleep(100);
      expect(await postingsRows()).toBe(1800);
    } finally {
      await storage?.close();
      await pool.end();
      await schema.drop();
    }
  }, 90_000);
});
