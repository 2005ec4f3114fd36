/**
 * The keyword side's absolute cap on selective terms (core/bm25.ts selectiveDocCap), as the
 * PostgreSQL statement applies it: in a project of 1,300 patterns, 20% is 260, but a term
 * held by more than 125 patterns finds no candidates by itself. (The JSON store calls
 * selectiveTerms itself; the unit tests cover the rule.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectiveDocCap } from '../../src/core/bm25.js';
import { requirePostgres, seededStorage, type SeededStorage } from '../support/pg.js';

const hasPg = await requirePostgres('keyword cap');
const SCOPE = { tenant_id: 't', project_id: 'p' };

describe.skipIf(!hasPg)('keyword candidates: the cap on selective terms (PostgreSQL)', () => {
  let seeded: SeededStorage;

  beforeAll(async () => {
    // "alpha" in 130 patterns, "beta" in 125, "gamma" in 10.
    seeded = await seededStorage('keyword_cap', (pool) => pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       SELECT 't', 'p', 'x' || lpad(g::text, 5, '0'),
              concat_ws(' ', 'filler', g, CASE WHEN g <= 130 THEN 'alpha' END, CASE WHEN g <= 125 THEN 'beta' END, CASE WHEN g <= 10 THEN 'gamma' END),
              'c', 5, 5, now(), now(), 3, '[1,0,0]'
       FROM generate_series(1, 1300) g`,
    ));
  }, 60_000);
  afterAll(async () => {
    await seeded?.drop();
  });

  const keyword = (terms: string[]) => seeded.storage.patterns.hybridCandidates(SCOPE, { vector: null, terms, vectorK: 0, keywordK: 5, evalWindow: 0 });

  it('a term above 125 patterns finds none, one at 125 still does', async () => {
    expect(selectiveDocCap(1300)).toBe(125);
    expect((await keyword(['alpha'])).candidates).toEqual([]);
    const beta = await keyword(['beta']);
    expect(beta.stats.df.get('beta')).toBe(125);
    expect(beta.candidates).toHaveLength(5);
    // A rare term beside the common one still finds its patterns (ties by id: all ten score alike).
    const both = await keyword(['alpha', 'gamma']);
    expect(both.candidates.map((c) => c.id).sort()).toEqual(['x00001', 'x00002', 'x00003', 'x00004', 'x00005']);
  });
});
