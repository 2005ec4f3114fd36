import { describe, expect, it } from 'vitest';
import { stepCount } from '../../src/core/rate-window.js';
import { FALLBACK_MS, sharedRateLimiter } from '../../src/adapters/storage/postgres/rate-limits.js';
import { silentLogger } from '../../src/ports/observability.js';

/**
 * The shared limiter's rule when the database is slow or away (docs/behavior.md "Rate limits"):
 * the process decides alone with its own count of the window, never refuses or fails for the
 * database's sake, and asks again FALLBACK_MS later. The clock is set by hand; the "slow"
 * statement is one that never answers until the test lets it.
 */
class Clock {
  ms = Date.parse('2025-01-01T00:00:10Z');
  now() {
    return new Date(this.ms);
  }
}

type Mode = 'up' | 'down' | 'hang';

function fakeDb() {
  const rows = new Map<string, number>();
  const held: (() => void)[] = [];
  const state = { mode: 'up' as Mode, statements: 0 };
  const query = async (sql: string, params: unknown[] = []) => {
    if (sql.startsWith('DELETE')) return { rows: [] };
    state.statements += 1;
    if (state.mode === 'down') throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    if (state.mode === 'hang') await new Promise<void>((resolve) => held.push(resolve));
    const [bucket, start, take, limit] = params as [string, Date, number, number];
    const key = `${bucket}@${start.toISOString()}`;
    const step = stepCount(rows.get(key) ?? 0, take, limit);
    rows.set(key, step.count);
    return { rows: [{ hits: step.count, granted: step.granted }] };
  };
  return { state, rows, release: () => held.splice(0).forEach((r) => r()), db: { query } as never };
}

describe('shared rate limiter, database slow or away', () => {
  it('away: decisions fall back to this process\'s own count, none refused for the database\'s sake', async () => {
    const clock = new Clock();
    const fake = fakeDb();
    const limiter = sharedRateLimiter(fake.db, { clock, logger: silentLogger, windowMs: 60_000, timeoutMs: 50 });
    for (let i = 0; i < 3; i++) expect((await limiter.hit('key:a', 5)).allowed).toBe(true);
    fake.state.mode = 'down';
    const during = [];
    for (let i = 0; i < 4; i++) during.push(await limiter.hit('key:a', 5));
    // The process saw 3 + 4 requests: its own count allows 5 of them.
    expect(during.map((d) => d.allowed)).toEqual([true, true, false, false]);
    expect(during[2].firstRefusal).toBe(true);
    // One failed statement, then none until FALLBACK_MS has passed.
    const asked = fake.state.statements;
    await limiter.hit('key:a', 5);
    expect(fake.state.statements).toBe(asked);
    fake.state.mode = 'up';
    clock.ms += FALLBACK_MS;
    await limiter.hit('key:b', 5);
    expect(fake.state.statements).toBe(asked + 1);
  });

  it('slow: a request waits at most the timeout; the late answer\'s grants are kept', async () => {
    const clock = new Clock();
    const fake = fakeDb();
    const limiter = sharedRateLimiter(fake.db, { clock, logger: silentLogger, windowMs: 60_000, timeoutMs: 20 });
    fake.state.mode = 'hang';
    const decision = await limiter.hit('key:a', 1000);
    expect(decision).toMatchObject({ allowed: true, limit: 1000 });
    fake.state.mode = 'up';
    fake.release();
    await expect.poll(() => fake.rows.size, { timeout: 20_000 }).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    // The block of 16 taken by the late statement: 15 left, spent without a statement.
    clock.ms += FALLBACK_MS;
    const before = fake.state.statements;
    for (let i = 0; i < 15; i++) expect((await limiter.hit('key:a', 1000)).allowed).toBe(true);
    expect(fake.state.statements).toBe(before);
    await limiter.hit('key:a', 1000);
    expect(fake.state.statements).toBe(before + 1);
  });
});
