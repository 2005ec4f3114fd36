/**
 * Vectors go to PostgreSQL as binary parameters (rows.ts vectorParam, pgvector's vector_recv
 * layout). PostgreSQL must read back exactly the float4 values sent, at every statement shape
 * the storage uses: a `::vector` cast that types the parameter, then a `::halfvec` cast of it.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseVector, vectorParam } from '../../src/adapters/storage/postgres/rows.js';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';

const hasPg = await requirePostgres('vector parameters');

/** Values a text form could get wrong: tiny, huge, negative zero, float4's extremes, a third. */
const AWKWARD = new Float32Array([1e-38, -3.4028234663852886e38, -0, 1 / 3, 0.1, 1e-45, 123456.789, -2.5e-7]);

describe('vectorParam (binary form)', () => {
  it('writes the dimensions, a zero, then each float4 big-endian', () => {
    const b = vectorParam(new Float32Array([1, -2.5, 0.1]));
    expect(b.length).toBe(16);
    expect(b.readInt16BE(0)).toBe(3);
    expect(b.readInt16BE(2)).toBe(0);
    expect([b.readFloatBE(4), b.readFloatBE(8), b.readFloatBE(12)]).toEqual([1, -2.5, Math.fround(0.1)]);
  });

  it('refuses what PostgreSQL would refuse less clearly', () => {
    expect(() => vectorParam(new Float32Array(0))).toThrow(/empty/);
    expect(() => vectorParam(new Float32Array([1, Number.NaN]))).toThrow(/non-finite/);
    expect(() => vectorParam(new Float32Array([Number.POSITIVE_INFINITY]))).toThrow(/non-finite/);
    expect(() => vectorParam(new Float32Array(16_001))).toThrow(/16000 dimensions/);
  });
});

describe.skipIf(!hasPg)('vector parameters (PostgreSQL)', () => {
  let db: TestDatabase;
  let schema: TestSchema;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase('vector_param');
    schema = await createMigratedSchema(db);
    pool = new pg.Pool({ connectionString: schema.url, max: 1 });
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await schema?.drop();
    await db?.drop();
  });

  it('PostgreSQL reads back exactly the float4 values sent', async () => {
    const res = await pool.query<{ v: string; dims: number }>('SELECT $1::vector::text AS v, vector_dims($1::vector) AS dims', [vectorParam(AWKWARD)]);
    expect(res.rows[0].dims).toBe(AWKWARD.length);
    const back = parseVector(res.rows[0].v);
    expect(Array.from(back)).toEqual(Array.from(AWKWARD));
  });

  it('keeps full precision when the statement also casts the parameter to halfvec later', async () => {
    const v = new Float32Array(384).map((_, i) => Math.sin(i * 0.37) / 7);
    const res = await pool.query<{ full: string; half: string }>(
      'SELECT ($1::vector)::text AS full, ($1::halfvec(384))::text AS half',
      [vectorParam(v)],
    );
    expect(Array.from(parseVector(res.rows[0].full))).toEqual(Array.from(v));
    // The halfvec is the cast of the same vector: rounded, but close.
    const half = parseVector(res.rows[0].half);
    expect(half.length).toBe(384);
    for (let i = 0; i < 384; i++) expect(Math.abs(half[i] - v[i])).toBeLessThan(1e-3);
  });

  it('stores and finds a pattern by the vector it was written with', async () => {
    const v = new Float32Array([0.6, 0.8, 0]);
    await pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       VALUES ('t', 'p', 'a', 'task', 'code', 5, 5, now(), now(), 3, $1::vector)`,
      [vectorParam(v)],
    );
    const res = await pool.query<{ id: string; d: number }>(
      "SELECT id, embedding <=> $1::vector AS d FROM patterns WHERE tenant_id = 't' AND project_id = 'p'",
      [vectorParam(v)],
    );
    expect(res.rows).toHaveLength(1);
    expect(res.rows[0].d).toBeCloseTo(0, 12);
  });
});
