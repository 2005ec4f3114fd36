/**
 * Hybrid recall's candidates carry updated_at as text PostgreSQL formats (hybrid-search.ts
 * ISO_UPDATED_AT) rather than a Date node-postgres parses. It must be the very string every
 * other read gives (rows.ts iso: Date.toISOString), whatever the stored instant holds: offsets,
 * microseconds (truncated, as a Date truncates them), years of fewer than four digits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres, seededStorage, type SeededStorage } from '../support/pg.js';

const hasPg = await requirePostgres('hybrid updated_at');
const SCOPE = { tenant_id: 't', project_id: 'p' };
const INSTANTS = [
  '2026-01-02 03:04:05.678999+00', '1999-12-31 23:59:59.9995+00', '2026-06-30 22:00:00+02', '0999-01-01 00:00:00.001+00',
  '2026-11-27 12:00:00.000001-09:30', '2024-02-29 23:59:59.999999+14',
];

describe.skipIf(!hasPg)('hybrid candidates: updated_at as text (PostgreSQL)', () => {
  let seeded: SeededStorage;

  beforeAll(async () => {
    seeded = await seededStorage('hybrid_updated_at', async (pool) => {
      for (const [i, at] of INSTANTS.entries()) {
        await pool.query(
          `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
           VALUES ('t', 'p', $1, $2, 'c', 5, 5, $3, $3, 3, $4)`,
          [`u${i}`, `shared word task ${i}`, at, `[1,${i / 10},0]`],
        );
      }
    });
  }, 60_000);
  afterAll(async () => {
    await seeded?.drop();
  });

  it('gives each candidate the updated_at a read of the pattern gives', async () => {
    for (const vector of [new Float32Array([1, 0, 0]), null]) {
      const set = await seeded.storage.patterns.hybridCandidates(SCOPE, { vector, terms: ['shared'], vectorK: vector ? 10 : 0, keywordK: 10, evalWindow: 0 });
      expect(set.candidates).toHaveLength(INSTANTS.length);
      for (const c of set.candidates) {
        const record = await seeded.storage.patterns.get(SCOPE, c.id);
        expect(c.updated_at, c.id).toBe(record!.updated_at);
        expect(c.updated_at).toBe(new Date(c.updated_at).toISOString());
      }
    }
  });
});
