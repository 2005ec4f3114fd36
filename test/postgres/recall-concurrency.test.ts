/**
 * Recall bookkeeping under concurrency: 64 POST-recall records at once over the same few
 * popular patterns (pages overlapping in different orders) and one scope counter row must
 * all commit, none deadlock, and leave every counter exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import type { PatternRecord, Scope } from '../../src/core/types.js';
import type { RecallRecord, Storage } from '../../src/ports/storage.js';
import { createMigratedSchema, createTestDatabase, pgConfig, requirePostgres, type TestDatabase } from '../support/pg.js';

const hasPg = await requirePostgres('recall bookkeeping under concurrency');

const scope: Scope = { tenant_id: 'acme', project_id: 'busy' };
const CONCURRENT = 64;
const IDS = ['pa', 'pb', 'pc', 'pd', 'pe', 'pf', 'pg', 'ph'];
const PAGE = 5;
const AT = '2025-03-01T10:00:00.000Z';

function pattern(id: string): PatternRecord {
  return {
    id, task: `popular task ${id}`, code: 'code', output: null, eval_score: 2, success_score: 2, reuse_count: 0, run_id: null,
    classification: 'internal', source: 'api', author: null, expires_at: null, redacted: false,
    created_at: AT, updated_at: AT, last_aged_at: null,
  };
}

const vec = (seed: number) => Float32Array.from({ length: 384 }, (_, i) => Math.cos(seed * 0.7 + i / 9));

/**
 * The i-th recall's page: PAGE of the popular patterns in an order of its own (a fixed
 * pseudo-random shuffle), so concurrent pages overlap in different orders, the way recalls
 * of similar tasks rank the same patterns differently.
 */
function pageOf(i: number): string[] {
  const ids = [...IDS];
  let state = (i + 1) * 2654435761;
  for (let j = ids.length - 1; j > 0; j--) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const k = state % (j + 1);
    [ids[j], ids[k]] = [ids[k], ids[j]];
  }
  return ids.slice(0, PAGE);
}

function recordOf(i: number): RecallRecord {
  const page = pageOf(i);
  return {
    page_ids: page,
    reused_ids: page,
    bonus: 0.1,
    at: AT,
    reused: true,
    event: { at: AT, kind: 'recall', best_similarity: 0.95, best_tier: 'duplicate', matches: page.length, latency_ms: i },
  };
}

/** How many of recalls [from, to) put each pattern on their page. */
function expectedReuses(from: number, to: number): Map<string, number> {
  const counts = new Map(IDS.map((id) => [id, 0]));
  for (let i = from; i < to; i++) for (const id of pageOf(i)) counts.set(id, counts.get(id)! + 1);
  return counts;
}

describe.skipIf(!hasPg)('PostgreSQL recall bookkeeping under 64 concurrent recalls', () => {
  let db: TestDatabase;
  let storage: Storage;

  beforeAll(async () => {
    db = await createTestDatabase('recall_conc');
    const schema = await createMigratedSchema(db, 'conc');
    // A pool as wide as the burst, so all 64 statements really are in the database at once.
    storage = await createPostgresStorage(pgConfig(schema.url, { SERVICE_DB_POOL_MAX: String(CONCURRENT) }));
    for (const [n, id] of IDS.entries()) await storage.patterns.insert(scope, pattern(id), vec(n));
  }, 60_000);

  afterAll(async () => {
    await storage?.close();
    await db?.drop();
  });

  it('commits every record with no lost update and no deadlock', async () => {
    const pages = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => storage.recordRecall(scope, recordOf(i))));

    // Each recall read its own page, in its own snapshot, before its own bump.
    pages.forEach((page, i) => {
      expect(page.map((p) => p.id).sort()).toEqual([...pageOf(i)].sort());
      for (const p of page) expect(p.reuse_count).toBeLessThan(CONCURRENT);
    });
    const expected = expectedReuses(0, CONCURRENT);
    const stored = await storage.patterns.getMany(scope, IDS);
    expect(stored).toHaveLength(IDS.length);
    for (const p of stored) {
      expect(p.reuse_count).toBe(expected.get(p.id));
      expect(p.success_score).toBeCloseTo(2 + 0.1 * expected.get(p.id)!, 6);
    }
    const counters = await storage.metrics.get(scope);
    expect(counters).toMatchObject({ recalls: CONCURRENT, reusing_recalls: CONCURRENT });
    const events = await storage.analytics.list(scope, { limit: 1000 });
    expect(events).toHaveLength(CONCURRENT);
    expect(new Set(events.map((e) => (e as { latency_ms: number }).latency_ms)).size).toBe(CONCURRENT);
  });

  it('keeps counting exactly when another burst runs over the bumped rows', async () => {
    await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => storage.recordRecall(scope, recordOf(CONCURRENT + i))));
    const first = expectedReuses(0, CONCURRENT);
    const second = expectedReuses(CONCURRENT, 2 * CONCURRENT);
    for (const p of await storage.patterns.getMany(scope, IDS)) expect(p.reuse_count).toBe(first.get(p.id)! + second.get(p.id)!);
    expect(await storage.metrics.get(scope)).toMatchObject({ recalls: 2 * CONCURRENT, reusing_recalls: 2 * CONCURRENT });
  });
});
