import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, startServer, type TestServer } from './helpers.js';

/**
 * Rate-limited answers say exactly when to come back: Retry-After (the window: 60 by the
 * spec) and the standard RateLimit-Limit / -Remaining / -Reset. The clock is set by hand.
 */
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('rate-limit headers', () => {
  it('a refused request carries Retry-After: 60 and RateLimit-* with the seconds left in the minute', async () => {
    const clock = new ManualClock(new Date('2025-01-01T00:00:45.200Z'));
    const t = await startServer({ SERVICE_RATE_LIMIT_DEFAULT: '2' }, { clock });
    servers.push(t);
    for (let i = 0; i < 2; i++) expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(200);
    const limited = await t.call('GET', '/v1/metrics');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.headers['ratelimit-limit']).toBe('2');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['ratelimit-reset']).toBe('15');
    clock.advance(14_900);
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(200);
  });

  it('an admitted request carries RateLimit-* too: the tightest of its per-IP and per-key counts', async () => {
    const clock = new ManualClock(new Date('2025-01-01T00:00:50.000Z'));
    const t = await startServer({ SERVICE_RATE_LIMIT_DEFAULT: '5' }, { clock });
    servers.push(t);
    const first = await t.call('GET', '/v1/metrics');
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-limit']).toBe('5');
    expect(first.headers['ratelimit-remaining']).toBe('4');
    expect(first.headers['ratelimit-reset']).toBe('10');
    expect(first.headers['retry-after']).toBeUndefined();
    const second = await t.call('GET', '/v1/metrics');
    expect(second.headers['ratelimit-remaining']).toBe('3');
    // Exempt routes count nothing and say nothing.
    expect((await t.call('GET', '/v1/version')).headers['ratelimit-limit']).toBeUndefined();
    // Other errors say nothing either: a client waits for RateLimit-Reset on any 429 or 503.
    const bad = await t.call('GET', '/v1/recall');
    expect(bad.statusCode).toBe(422);
    expect(bad.headers['ratelimit-reset']).toBeUndefined();
  });

  it('SERVICE_RATE_LIMIT_WINDOW_SECONDS shortens the window (and Retry-After with it)', async () => {
    const clock = new ManualClock(new Date('2025-01-01T00:00:00.500Z'));
    const t = await startServer({ SERVICE_RATE_LIMIT_EXPENSIVE: '1', SERVICE_RATE_LIMIT_WINDOW_SECONDS: '2' }, { clock });
    servers.push(t);
    const body = { code: 'x = 1' };
    expect((await t.call('POST', '/v1/evaluate', body)).statusCode).not.toBe(429);
    const limited = await t.call('POST', '/v1/evaluate', body);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('2');
    expect(limited.headers['ratelimit-reset']).toBe('2');
    clock.advance(1_500);
    expect((await t.call('POST', '/v1/evaluate', body)).statusCode).not.toBe(429);
  });

  it('a bad window value stops startup naming the variable', async () => {
    await expect(startServer({ SERVICE_RATE_LIMIT_WINDOW_SECONDS: '0' })).rejects.toThrow(/SERVICE_RATE_LIMIT_WINDOW_SECONDS/);
  });
});
