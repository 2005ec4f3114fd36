/**
 * PostgreSQL's recall bookkeeping queue (docs/behavior.md "Recall bookkeeping"): what many
 * recalls leave behind is exact once the storage closes, read-your-writes holds within the
 * process, and a database that goes away while a batch is written ends nothing: the batch is
 * retried and a later one written as usual.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { recallTrace } from '../../src/core/recall-trace.js';
import { patternKey, type PatternRecord, type Scope } from '../../src/core/types.js';
import type { Logger } from '../../src/ports/observability.js';
import type { RecallRecord, Storage } from '../../src/ports/storage.js';
import { adminQuery, createMigratedSchema, createTestDatabase, pgConfig, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';

const hasPg = await requirePostgres('recall bookkeeping queue');

const A: Scope = { tenant_id: 'acme', project_id: 'queue-a' };
const B: Scope = { tenant_id: 'acme', project_id: 'queue-b' };
const IDS = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
const AT = '2025-04-01T10:00:00.000Z';
const POLL = { timeout: 20_000 };

function pattern(id: string): PatternRecord {
  return {
    id, task: `task ${id}`, code: 'code', output: null, eval_score: 2, success_score: 2, reuse_count: 0, run_id: null,
    classification: 'internal', source: 'api', author: null, expires_at: null, redacted: false,
    created_at: AT, updated_at: AT, last_aged_at: null,
  };
}

const vec = (seed: number) => Float32Array.from({ length: 384 }, (_, i) => Math.cos(seed * 0.7 + i / 9));

/** The i-th recall reuses 1 to 3 of the patterns (a fixed choice); every fifth counts as a miss. */
function recordOf(i: number): RecallRecord {
  const reused = IDS.filter((_, j) => (i + j) % 4 === 0).slice(0, 3);
  return {
    page_ids: IDS,
    reused_ids: reused,
    bonus: 0.1,
    at: AT,
    reused: i % 5 !== 0,
    event: { at: AT, kind: 'recall', readonly: false, best_similarity: 0.9, best_tier: 'duplicate', matches: IDS.length, latency_ms: i },
    trace: recallTrace(`r${i}`, AT, `task ${i}`, vec(i), IDS.map(patternKey)),
  };
}

function expected(from: number, to: number): { reuses: Map<string, number>; recalls: number; reusing: number } {
  const reuses = new Map(IDS.map((id) => [id, 0]));
  let reusing = 0;
  for (let i = from; i < to; i++) {
    const r = recordOf(i);
    for (const id of r.reused_ids) reuses.set(id, reuses.get(id)! + 1);
    if (r.reused) reusing++;
  }
  return { reuses, recalls: to - from, reusing };
}

/** A logger that keeps what it was told, to wait for a retry's warning. */
function recordingLogger(): Logger & { messages: string[] } {
  const messages: string[] = [];
  const keep = (_obj: object, msg?: string) => void messages.push(msg ?? '');
  return { messages, debug: keep, info: keep, warn: keep, error: keep };
}

async function seed(storage: Storage): Promise<void> {
  for (const scope of [A, B]) for (const [n, id] of IDS.entries()) await storage.patterns.insert(scope, pattern(id), vec(n));
}

describe.skipIf(!hasPg)('PostgreSQL recall bookkeeping queue', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('recall_queue');
  }, 60_000);

  afterAll(async () => {
    await db?.drop();
  });

  it('writes every recall exactly once a clean close has flushed the queue: reuse counts, metrics, ROI events, traces', async () => {
    const schema = await createMigratedSchema(db, 'clean');
    // Small batches and a long wait: most records are still queued when close() is called.
    const config = pgConfig(schema.url, { SERVICE_DB_RECALL_BATCH: '16', SERVICE_DB_RECALL_FLUSH_MS: '1000' });
    const first = await createPostgresStorage(config);
    await seed(first);
    const RECALLS = 300;
    const LOOKUPS = 50;
    for (let start = 0; start < RECALLS; start += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => first.recordRecall(start + j < RECALLS / 2 ? A : B, recordOf(start + j))));
    }
    // Lookups are queued and resolve when written: not awaited here, as the service does not.
    const lookups = Array.from({ length: LOOKUPS }, (_, i) =>
      first.recordLookup(A, { event: { at: AT, kind: 'recall', readonly: true, best_similarity: null, best_tier: null, matches: 0, latency_ms: i }, trace: recallTrace(`l${i}`, AT, 'lookup', null, []) }));
    await first.close();
    await Promise.all(lookups);

    const second = await createPostgresStorage(config);
    try {
      for (const [scope, from, to] of [[A, 0, RECALLS / 2], [B, RECALLS / 2, RECALLS]] as const) {
        const want = expected(from, to);
        for (const p of await second.patterns.getMany(scope, IDS)) {
          expect(p.reuse_count).toBe(want.reuses.get(p.id));
          expect(p.success_score).toBeCloseTo(Math.min(10, 2 + 0.1 * want.reuses.get(p.id)!), 6);
        }
        expect(await second.metrics.get(scope)).toMatchObject({ recalls: want.recalls, reusing_recalls: want.reusing });
        const events = await second.analytics.list(scope, { limit: 10_000 });
        const lookupsHere = scope === A ? LOOKUPS : 0;
        expect(events).toHaveLength(want.recalls + lookupsHere);
        expect(events.filter((e) => e.readonly === true)).toHaveLength(lookupsHere);
        expect(await second.outcomes.count(scope)).toMatchObject({ traces: want.recalls + lookupsHere });
      }
      const trace = await second.outcomes.getTrace(A, 'r7');
      expect(trace).toMatchObject({ recall_id: 'r7', query: 'task 7', pattern_keys: IDS.map(patternKey) });
      expect(trace?.query_vector?.values).toHaveLength(384);
      expect((await second.outcomes.getTrace(A, 'l3'))?.query_vector).toBeNull();
    } finally {
      await second.close();
    }
  }, 120_000);

  it('reads of this process wait for their scope\'s queued bookkeeping; recall\'s own page read does not', async () => {
    const schema = await createMigratedSchema(db, 'ryw');
    // The flush waits a minute unless something asks for it: the reads below must.
    const storage = await createPostgresStorage(pgConfig(schema.url, { SERVICE_DB_RECALL_FLUSH_MS: '60000', SERVICE_DB_RECALL_BATCH: '1000' }));
    try {
      await seed(storage);
      const page = await storage.recordRecall(A, recordOf(0));
      // Queued, not written: a second recall's page still shows the counts before the first.
      const again = await storage.recordRecall(A, recordOf(0));
      expect(again.find((p) => p.id === 'p1')?.reuse_count).toBe(page.find((p) => p.id === 'p1')?.reuse_count);
      expect((await storage.patterns.get(A, 'p1'))?.reuse_count).toBe(2);
      expect(await storage.metrics.get(A)).toMatchObject({ recalls: 2 });
      expect(await storage.analytics.list(A, { limit: 10 })).toHaveLength(2);
      expect(await storage.outcomes.getTrace(A, 'r0')).not.toBeNull();
      await storage.recordRecall(B, recordOf(1));
      await storage.settleRecallWrites();
      expect(await storage.metrics.get(B)).toMatchObject({ recalls: 1 });
    } finally {
      await storage.close();
    }
  }, 60_000);

  it('survives the database going away while a batch is written: no crash, whole batches only, later ones written', async () => {
    const schema: TestSchema = await createMigratedSchema(db, 'away');
    const logger = recordingLogger();
    const storage = await createPostgresStorage(pgConfig(schema.url, { SERVICE_DB_RECALL_FLUSH_MS: '60000' }), { logger });
    const failures = () => logger.messages.filter((m) => m.startsWith('writing recall bookkeeping failed') || m.startsWith('recall bookkeeping may be lost'));
    try {
      await seed(storage);
      for (let i = 0; i < 10; i++) await storage.recordRecall(A, recordOf(i));
      // The database refuses new sessions and ends the open ones: the queued batch cannot be written.
      await adminQuery(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS false`);
      await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db.name]);
      const settled = storage.settleRecallWrites();
      await expect.poll(() => failures().length, POLL).toBeGreaterThan(0);
      await adminQuery(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`);
      await settled;
      // Refused at the door, the batch is retried and written; a pooled connection the server had
      // ended under the statement leaves its outcome unknown, and the batch is not repeated.
      const first = (await storage.metrics.get(A)).recalls;
      const retried = !logger.messages.some((m) => m.startsWith('recall bookkeeping may be lost'));
      expect(first).toBe(retried ? 10 : 0);

      for (let i = 10; i < 20; i++) await storage.recordRecall(A, recordOf(i));
      await storage.settleRecallWrites();
      const want = expected(retried ? 0 : 10, 20);
      for (const p of await storage.patterns.getMany(A, IDS)) expect(p.reuse_count).toBe(want.reuses.get(p.id));
      expect(await storage.metrics.get(A)).toMatchObject({ recalls: want.recalls, reusing_recalls: want.reusing });
      expect(await storage.analytics.list(A, { limit: 100 })).toHaveLength(want.recalls);
      expect(await storage.outcomes.count(A)).toMatchObject({ traces: want.recalls });
      expect(logger.messages.filter((m) => m.startsWith('recall bookkeeping lost'))).toEqual([]);
    } finally {
      await adminQuery(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`);
      await storage.close();
    }
  }, 120_000);
});
