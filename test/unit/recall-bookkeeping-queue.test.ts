/**
 * The recall bookkeeping queue's own rules (docs/behavior.md "Recall bookkeeping") over a
 * stand-in database: batches summed as documented, never more than a batch unwritten, a
 * refused batch retried, one of unknown outcome never repeated, settle and close wait for all.
 */
import { describe, expect, it } from 'vitest';
import { AttemptError, type Db } from '../../src/adapters/storage/postgres/db.js';
import type { PlannerStatistics } from '../../src/adapters/storage/postgres/planner-stats.js';
import { RecallBookkeeping, type BookkeepingEntry } from '../../src/adapters/storage/postgres/recall-queue.js';
import type { Scope } from '../../src/core/types.js';
import type { Logger } from '../../src/ports/observability.js';

const A: Scope = { tenant_id: 't', project_id: 'a' };
const B: Scope = { tenant_id: 't', project_id: 'b' };
const POLL = { timeout: 20_000 };

function entry(scope: Scope, i: number, reused_ids: string[] | null): BookkeepingEntry {
  return {
    scope,
    counted: reused_ids ? { reused_ids, bonus: 0.1, at: `2025-01-01T00:00:0${i % 10}.000Z`, reused: reused_ids.length > 0 } : null,
    event: { at: '2025-01-01T00:00:00.000Z', kind: 'recall', readonly: reused_ids === null, matches: i },
    trace: null,
  };
}

/** A database whose every statement waits until the test answers it. */
function standInDb() {
  const calls: { params: unknown[]; settle: (outcome: Error | null) => void }[] = [];
  const db = {
    attempt(_sql: string, params: unknown[]) {
      return new Promise((resolve, reject) => {
        calls.push({ params, settle: (err) => (err ? reject(err) : resolve({ rows: [{ reused_rows: 0, id: null, tenant_id: null, project_id: null }] })) });
      });
    },
    query: async () => ({ rows: [] }),
  } as unknown as Db;
  return { db, calls };
}

function queueOn(db: Db, batchMax: number) {
  const messages: string[] = [];
  const keep = (_o: object, msg?: string) => void messages.push(msg ?? '');
  const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep };
  const stats = { noteWrites: () => undefined } as unknown as PlannerStatistics;
  return { queue: new RecallBookkeeping(db, stats, logger, { batchMax, flushMs: 60_000 }), messages };
}

describe('recall bookkeeping queue', () => {
  it('sums a batch: bumps per pattern (one per recall), counters per scope, every event in order', async () => {
    const { db, calls } = standInDb();
    const { queue } = queueOn(db, 100);
    await queue.add(entry(A, 1, ['p1', 'p2', 'p1']));
    await queue.add(entry(A, 2, ['p1']));
    await queue.add(entry(A, 3, []));
    await queue.add(entry(B, 4, ['p1']));
    await queue.add(entry(A, 5, null));
    const settled = queue.settle();
    await expect.poll(() => calls.length, POLL).toBe(1);
    const p = calls[0].params as unknown[][];
    // Bumps: (A, p1) twice, (A, p2) once, (B, p1) once; the latest time of each.
    expect(p[2]).toEqual(['p1', 'p2', 'p1']);
    expect(p[1]).toEqual(['a', 'a', 'b']);
    expect(p[3]).toEqual([2, 1, 1]);
    expect((p[4] as number[])[0]).toBeCloseTo(0.2, 12);
    expect(p[5]).toEqual(['2025-01-01T00:00:02.000Z', '2025-01-01T00:00:01.000Z', '2025-01-01T00:00:04.000Z']);
    // Counters: A counted three recalls (two reusing), B one; the lookup counts nothing.
    expect(p[7]).toEqual(['a', 'b']);
    expect(p[8]).toEqual([3, 1]);
    expect(p[9]).toEqual([2, 1]);
    // Events: all five, lookup included, in the order they were added.
    expect(p[11]).toEqual(['a', 'a', 'a', 'b', 'a']);
    expect((p[14] as string[]).map((d) => JSON.parse(d).matches)).toEqual([1, 2, 3, 4, 5]);
    calls[0].settle(null);
    await settled;
  });

  it('never holds more than a batch unwritten: the next record waits for room, then goes in order', async () => {
    const { db, calls } = standInDb();
    const { queue } = queueOn(db, 2);
    await queue.add(entry(A, 1, ['p1']));
    await queue.add(entry(A, 2, ['p1']));
    // Full: the batch goes at once, and a third record waits until it is written.
    await expect.poll(() => calls.length, POLL).toBe(1);
    let admitted = false;
    const third = queue.add(entry(A, 3, ['p1'])).then(() => (admitted = true));
    const fourth = queue.add(entry(A, 4, ['p1']));
    await new Promise((resolve) => setImmediate(resolve));
    expect(admitted).toBe(false);
    expect(queue.pendingIn(A, 'counted')).toBe(true);
    calls[0].settle(null);
    await third;
    await fourth;
    const settled = queue.settle();
    await expect.poll(() => calls.length, POLL).toBe(2);
    expect((calls[1].params[14] as string[]).map((d) => JSON.parse(d).matches)).toEqual([3, 4]);
    calls[1].settle(null);
    await settled;
    expect(queue.pendingIn(A, 'all')).toBe(false);
  });

  it('retries a batch the database refused, and writes it once it answers', async () => {
    const { db, calls } = standInDb();
    const { queue, messages } = queueOn(db, 10);
    const { written } = await queue.add(entry(A, 1, ['p1']));
    const settled = queue.settle();
    await expect.poll(() => calls.length, POLL).toBe(1);
    calls[0].settle(new AttemptError(new Error('connection refused'), true));
    await expect.poll(() => calls.length, POLL).toBe(2);
    expect(calls[1].params).toEqual(calls[0].params);
    calls[1].settle(null);
    await settled;
    await written;
    expect(messages).toEqual(['writing recall bookkeeping failed; retrying']);
  });

  it('never repeats a batch whose outcome is unknown; the next batch is written as usual', async () => {
    const { db, calls } = standInDb();
    const { queue, messages } = queueOn(db, 10);
    await queue.add(entry(A, 1, ['p1']));
    const first = queue.settle();
    await expect.poll(() => calls.length, POLL).toBe(1);
    calls[0].settle(new AttemptError(new Error('Connection terminated unexpectedly'), false));
    await first;
    expect(messages).toEqual(['recall bookkeeping may be lost: the connection broke while this batch was written, so it is not repeated']);
    await queue.add(entry(A, 2, ['p1']));
    const closed = queue.close();
    await expect.poll(() => calls.length, POLL).toBe(2);
    expect((calls[1].params[14] as string[]).map((d) => JSON.parse(d).matches)).toEqual([2]);
    calls[1].settle(null);
    await closed;
  });
});
