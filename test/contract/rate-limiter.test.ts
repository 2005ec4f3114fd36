/**
 * The RateLimiter port's contract (docs/behavior.md "Rate limits"), on both adapters: the
 * in-memory limiter of one process and the limiter shared through PostgreSQL (two limiters on
 * one database standing for two processes). The clock is set by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../src/adapters/rate-limit/memory.js';
import { createPostgresRateLimiter } from '../../src/adapters/storage/postgres/rate-limits.js';
import { noopInstruments, silentLogger } from '../../src/ports/observability.js';
import type { RateLimiter } from '../../src/ports/rate-limiter.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';

class Clock {
  ms = Date.parse('2025-01-01T00:00:45.000Z');
  now() {
    return new Date(this.ms);
  }
}

interface Subject {
  /** Limiters counting together (one for the memory adapter: it is one process's). */
  limiters: RateLimiter[];
  clock: Clock;
}

const hasPg = await requirePostgres('rate limiter contract (PostgreSQL)');

function contract(name: string, make: () => Promise<Subject>) {
  describe(`RateLimiter contract: ${name}`, () => {
    let subject: Subject;
    let bucketNo = 0;
    const bucket = () => `key:contract-${(bucketNo += 1)}`;

    beforeAll(async () => {
      subject = await make();
    });
    afterAll(async () => {
      await Promise.all(subject?.limiters.map((l) => l.close()) ?? []);
    });

    it('admits exactly the limit over its limiters, then refuses; one first refusal', async () => {
      const b = bucket();
      const decisions = [];
      for (let i = 0; i < 100; i++) decisions.push(await subject.limiters[i % subject.limiters.length].hit(b, 37));
      // Every limiter has refused at the end, so none holds a grant: the count is exact.
      expect(decisions.filter((d) => d.allowed)).toHaveLength(37);
      expect(decisions.filter((d) => d.firstRefusal)).toHaveLength(1);
      expect(decisions.at(-1)).toMatchObject({ allowed: false, limit: 37, remaining: 0, resetSeconds: 15 });
    });

    it('counts buckets apart and starts again when the window turns', async () => {
      const [a, b] = [bucket(), bucket()];
      const limiter = subject.limiters[0];
      expect((await limiter.hit(a, 1)).allowed).toBe(true);
      expect((await limiter.hit(a, 1)).allowed).toBe(false);
      expect((await limiter.hit(b, 1)).allowed).toBe(true);
      subject.clock.ms += 15_000;
      const next = await limiter.hit(a, 1);
      expect(next).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 60 });
      subject.clock.ms -= 15_000;
    });

    it('says how many are left on an admitted request', async () => {
      const b = bucket();
      const first = await subject.limiters[0].hit(b, 5);
      expect(first).toMatchObject({ allowed: true, limit: 5, remaining: 4, firstRefusal: false });
    });
  });
}

contract('in memory', async () => {
  const clock = new Clock();
  return { clock, limiters: [createMemoryRateLimiter(clock, 60_000)] };
});

describe.skipIf(!hasPg)('on PostgreSQL', () => {
  let db: TestDatabase;
  let schema: TestSchema;
  beforeAll(async () => {
    db = await createTestDatabase('rate_limiter_contract');
    schema = await createMigratedSchema(db, 'limits');
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  contract('shared through PostgreSQL, two limiters on one database', async () => {
    const clock = new Clock();
    const make = () => createPostgresRateLimiter({
      connectionString: schema.url, clock, logger: silentLogger, instruments: noopInstruments,
      windowMs: 60_000, timeoutMs: 30_000, connectTimeoutMs: 5_000,
    });
    return { clock, limiters: [make(), make()] };
  });

  it('past windows are deleted as the window turns', async () => {
    const clock = new Clock();
    const limiter = createPostgresRateLimiter({
      connectionString: schema.url, clock, logger: silentLogger, instruments: noopInstruments,
      windowMs: 60_000, timeoutMs: 30_000, connectTimeoutMs: 5_000,
    });
    try {
      clock.ms = Date.parse('2025-01-02T00:00:10Z');
      await limiter.hit('key:sweep', 3);
      clock.ms += 60_000;
      await limiter.hit('key:sweep', 3);
      await expect.poll(async () => (await adminQuery('SELECT count(*)::int AS n FROM rate_limit_windows WHERE window_start < $1', [new Date(Date.parse('2025-01-02T00:01:00Z'))], schema.url)).rows[0].n, { timeout: 20_000 }).toBe(0);
    } finally {
      await limiter.close();
    }
  });
});
