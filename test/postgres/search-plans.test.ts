import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateUp } from '../../src/adapters/migrations/index.js';
import { buildSearchStatement, SEARCH_SESSION_SQL } from '../../src/adapters/storage/postgres/search.js';
import type { Scope } from '../../src/core/types.js';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';

const hasPg = await requirePostgres('search statement plans');
const SCOPE: Scope = { tenant_id: 'default', project_id: 'default' };
const DIM = 384;

function unit(seed: number): Float32Array {
  const v = Float32Array.from({ length: DIM }, (_, i) => Math.sin(seed * 1.3 + i * 0.11) + Math.cos(seed * 0.7 * i));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/**
 * The nearest-neighbour statement (learn's near-duplicate check, cosine-ranked recall) as a
 * named prepared statement: PostgreSQL plans its first five executions for their values, then
 * keeps a generic plan when that is no worse. With k bound as a parameter the generic plan's
 * guess at the LIMIT made it worse, and every execution was planned afresh (about a tenth of
 * a millisecond each at 10k patterns).
 */
describe.skipIf(!hasPg)('search statement: plan reuse (PostgreSQL)', () => {
  let db: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase('search_plans');
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
    await migrateUp(pool);
    await pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, classification, source, created_at, updated_at, dim, embedding)
       SELECT 'default', 'default', 'p' || lpad(g::text, 5, '0'), 'task ' || g, 'code', 7, 7, 'internal', 'api', now(), now(), ${DIM}, v::vector
       FROM unnest($1::text[]) WITH ORDINALITY AS u(v, g)`,
      [Array.from({ length: 400 }, (_, i) => `[${Array.from(unit(i)).join(',')}]`)],
    );
    await pool.query('ANALYZE patterns');
  });

  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('settles on the generic plan after five executions, for learn\'s k and recall\'s', async () => {
    const client = await pool.connect();
    try {
      await client.query(SEARCH_SESSION_SQL);
      for (const [k, window] of [[5, 0], [20, 10]] as const) {
        const name = `search_k${k}`;
        for (let i = 0; i < 8; i++) {
          const stmt = buildSearchStatement(SCOPE, unit(1_000 + i), k, {}, { columns: 'id', evalWindow: window });
          const res = await client.query({ name, text: stmt.sql, values: stmt.params });
          expect(res.rows).toHaveLength(k);
        }
        const plans = await client.query<{ generic_plans: string; custom_plans: string }>(
          'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1', [name],
        );
        expect(plans.rows[0]).toEqual({ generic_plans: '3', custom_plans: '5' });
      }
    } finally {
      client.release();
    }
  });
});
