import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateUp } from '../../src/adapters/migrations/index.js';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { buildSearchStatement } from '../../src/adapters/storage/postgres/search.js';
import type { PatternRecord, Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { createTestDatabase, pgConfig, requirePostgres, type TestDatabase } from '../support/pg.js';

const hasPg = await requirePostgres('vector search');

const A: Scope = { tenant_id: 't1', project_id: 'p1' };
const B: Scope = { tenant_id: 't2', project_id: 'p1' };
const ROWS_A = 3000;

function parseVector(text: string): Float32Array {
  return Float32Array.from(text.slice(1, -1).split(',').map(Number));
}

function unit(dim: number, seed: number): Float32Array {
  // Deterministic, well spread vectors: a few sinusoids with seed-dependent phases.
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = Math.sin(seed * 1.7 + i * (0.05 + (seed % 7) * 0.01)) + Math.cos(seed * 0.3 * i);
  return v;
}

function record(id: string, over: Partial<PatternRecord> = {}): PatternRecord {
  const at = '2025-01-01T00:00:00.000Z';
  return {
    id, task: `task ${id}`, code: 'code', output: null, eval_score: 7, success_score: 7, reuse_count: 0, run_id: null,
    classification: 'internal', source: 'api', author: null, expires_at: null, redacted: false,
    created_at: at, updated_at: at, last_aged_at: null, ...over,
  };
}

describe.skipIf(!hasPg)('vector search (PostgreSQL + pgvector HNSW)', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let storage: Storage;

  beforeAll(async () => {
    db = await createTestDatabase('vector_search');
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    await migrateUp(pool);
    // Bulk-loading thousands of rows through an existing HNSW index inserts them one graph
    // node at a time (several seconds on a shared CI core). Building the index once over the
    // loaded rows is the same index, made faster: we drop it, load, and re-create it from the
    // definition the migration created (pg_get_indexdef), so the schema under test is unchanged.
    const def = (await pool.query<{ d: string }>("SELECT pg_get_indexdef('patterns_embedding_384_hnsw'::regclass) AS d")).rows[0].d;
    await pool.query('DROP INDEX patterns_embedding_384_hnsw');
    // Scope A: 3000 clustered 384-d vectors (cluster g % 20); 10% confidential, a quarter
    // sdk, scores g % 11, all independent of the cluster. Scope B: a near copy of every 3rd A vector, so if scope were applied after
    // the search, B's rows would crowd A's out of the results.
    await pool.query(`
      SELECT setseed(0.42); -- reproducible data
      CREATE TEMP TABLE centroids AS
        SELECT c, (SELECT array_agg(random()::real - 0.5) FROM generate_series(1, 384) WHERE c >= 0) AS v
        FROM generate_series(0, 19) c;
      INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, classification, source,
                            created_at, updated_at, dim, embedding)
      SELECT 't1', 'p1', 'a' || lpad(g::text, 6, '0'), 'task ' || g, 'code', 5, (g % 11)::float,
             CASE WHEN (g / 20) % 10 = 0 THEN 'confidential' WHEN (g / 20) % 3 = 0 THEN 'public' ELSE 'internal' END,
             CASE WHEN (g / 20) % 4 = 0 THEN 'sdk' ELSE 'api' END, now(), now(), 384, v.e
      FROM generate_series(1, ${ROWS_A}) g,
      LATERAL (SELECT array_agg(x + (random()::real - 0.5) * 0.3 ORDER BY i)::vector AS e
               FROM centroids, unnest(centroids.v) WITH ORDINALITY u(x, i) WHERE centroids.c = g % 20) v;
      INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, classification, source,
                            created_at, updated_at, dim, embedding)
      SELECT 't2', 'p1', 'b' || substr(id, 2), task, code, eval_score, success_score, classification, source,
             created_at, updated_at, dim,
             (SELECT array_agg(x + 0.001 ORDER BY i)::vector FROM unnest(embedding::real[]) WITH ORDINALITY u(x, i))
      FROM patterns WHERE tenant_id = 't1' AND substr(id, 2)::int % 3 = 0;`);
    await pool.query(`SET maintenance_work_mem = '256MB'; ${def}`);
    await pool.query('ANALYZE patterns');
    storage = await createPostgresStorage(pgConfig(db.url));
  });

  afterAll(async () => {
    await storage?.close();
    await pool?.end();
    await db?.drop();
  });

  async function vectorOf(id: string): Promise<Float32Array> {
    const res = await pool.query<{ e: string }>("SELECT embedding::text AS e FROM patterns WHERE tenant_id = 't1' AND id = $1", [id]);
    return parseVector(res.rows[0].e);
  }

  /** Exact top-k by brute force (index scans disabled), for comparison with the HNSW answer. */
  async function exactTopK(query: Float32Array, k: number, classification: string): Promise<string[]> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL enable_indexscan = off');
      const res = await client.query<{ id: string }>(
        `SELECT id FROM patterns WHERE tenant_id = 't1' AND project_id = 'p1' AND classification = $2 AND dim = 384
         ORDER BY embedding <=> $1::vector LIMIT $3`,
        [`[${Array.from(query).join(',')}]`, classification, k],
      );
      await client.query('COMMIT');
      return res.rows.map((r) => r.id);
    } finally {
      client.release();
    }
  }

  it('the planner uses the 384-d HNSW index for a scoped, filtered search', async () => {
    const query = await vectorOf('a000205');
    const stmt = buildSearchStatement(A, query, 10, { classification: 'confidential', min_score: 0 });
    const client = await pool.connect();
    try {
      await client.query(`BEGIN; ${stmt.setup}`);
      const res = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${stmt.sql}`, stmt.params);
      await client.query('COMMIT');
      const plan = res.rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index Scan using patterns_embedding_384_hnsw on patterns/);
      expect(plan).not.toMatch(/Seq Scan/);
      // Scope and filters are evaluated by the index scan node itself (its Filter line comes
      // right after its Order By), not by a node above it.
      const lines = plan.split('\n');
      const scanAt = lines.findIndex((l) => l.includes('Index Scan using patterns_embedding_384_hnsw'));
      expect(lines[scanAt + 1]).toMatch(/^\s+Order By: /);
      const filter = lines[scanAt + 2];
      expect(filter).toMatch(/^\s+Filter: /);
      for (const predicate of ["tenant_id = 't1'", "project_id = 'p1'", "classification = 'confidential'", 'success_score >= ']) {
        expect(filter).toContain(predicate);
      }
    } finally {
      client.release();
    }
  });

  it('returns k in-scope matches for a selective filter (iterative index scan), best first', async () => {
    const queryId = 'a000205'; // g = 205: confidential
    const query = await vectorOf(queryId);
    const found = await storage.patterns.search(A, query, 10, { classification: 'confidential' });

    // 10% of A is confidential: a plain HNSW scan (ef_search 40) would yield about 4 rows.
    expect(found).toHaveLength(10);
    for (const m of found) {
      expect(m.pattern.classification).toBe('confidential');
      expect(m.pattern.id.startsWith('a')).toBe(true);
    }
    expect(found[0].pattern.id).toBe(queryId);
    expect(found[0].similarity).toBeCloseTo(1, 5);
    const sims = found.map((m) => m.similarity);
    expect([...sims].sort((x, y) => y - x)).toEqual(sims);

    const exact = await exactTopK(query, 10, 'confidential');
    const overlap = found.filter((m) => exact.includes(m.pattern.id)).length;
    expect(overlap).toBeGreaterThanOrEqual(8);
  });

  it('applies source and min_score inside the search too', async () => {
    const query = await vectorOf('a000008'); // g = 8: sdk, score 8
    const found = await storage.patterns.search(A, query, 15, { source: 'sdk', min_score: 8 });
    expect(found).toHaveLength(15);
    for (const m of found) {
      expect(m.pattern.source).toBe('sdk');
      expect(m.pattern.success_score).toBeGreaterThanOrEqual(8);
    }
    expect(found[0].pattern.id).toBe('a000008');
  });

  it('never returns another scope, even when its vectors are closer', async () => {
    const query = await vectorOf('a000033');
    const inB = await storage.patterns.search(B, query, 5);
    expect(inB[0].pattern.id).toBe('b000033');
    const inA = await storage.patterns.search(A, query, 50);
    expect(inA).toHaveLength(50);
    expect(inA.every((m) => m.pattern.id.startsWith('a'))).toBe(true);
    expect(await storage.patterns.search({ tenant_id: 't1', project_id: 'other' }, query, 5)).toEqual([]);
  });

  it('stores and searches 384-d and 1536-d vectors side by side', async () => {
    const scope: Scope = { tenant_id: 'dims', project_id: 'p' };
    for (let i = 0; i < 30; i++) {
      await storage.patterns.insert(scope, record(`s${i}`), unit(384, i));
      await storage.patterns.insert(scope, record(`l${i}`), unit(1536, i));
    }
    await storage.patterns.insert(scope, record('m0'), unit(768, 3));

    const small = await storage.patterns.search(scope, unit(384, 7), 5);
    expect(small[0].pattern.id).toBe('s7');
    expect(small.every((m) => m.pattern.id.startsWith('s'))).toBe(true);

    const large = await storage.patterns.search(scope, unit(1536, 11), 40);
    expect(large[0].pattern.id).toBe('l11');
    expect(large[0].similarity).toBeCloseTo(1, 5);
    expect(large).toHaveLength(30);
    expect(large.every((m) => m.pattern.id.startsWith('l'))).toBe(true);

    // A dimension without an index still works (exact scan).
    const other = await storage.patterns.search(scope, unit(768, 3), 5);
    expect(other.map((m) => m.pattern.id)).toEqual(['m0']);

    // Switching a pattern's vector to the other dimension moves it between indexes.
    await storage.patterns.setVector(scope, 's7', unit(1536, 500));
    expect((await storage.patterns.search(scope, unit(1536, 500), 1))[0].pattern.id).toBe('s7');
    expect((await storage.patterns.search(scope, unit(384, 7), 30)).map((m) => m.pattern.id)).not.toContain('s7');
  });

  it('the 1536-d query matches its partial HNSW index', async () => {
    // With only a few 1536-d rows the planner rightly prefers a sequential scan, so this test
    // disables seq scans: it proves the query's expression and predicate match the index
    // (a mismatch would leave no index to choose), not the planner's cost choice.
    const stmt = buildSearchStatement(A, unit(1536, 1), 5, { classification: 'public' });
    const client = await pool.connect();
    try {
      await client.query(`BEGIN; ${stmt.setup}; SET LOCAL enable_seqscan = off`);
      const res = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${stmt.sql}`, stmt.params);
      await client.query('COMMIT');
      expect(res.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Scan using patterns_embedding_1536_hnsw/);
    } finally {
      client.release();
    }
  });
});
