import { describe, expect, it } from 'vitest';
import { GrantCache, grantSize, LocalWindowCounts, MAX_GRANT, rateWindow, stepCount } from '../../src/core/rate-window.js';

describe('rateWindow', () => {
  it('aligns windows on the clock and rounds the seconds left up, at least 1', () => {
    expect(rateWindow(Date.parse('2025-01-01T00:00:45.200Z'), 60_000)).toMatchObject({ startMs: Date.parse('2025-01-01T00:00:00Z'), resetSeconds: 15 });
    expect(rateWindow(Date.parse('2025-01-01T00:00:59.999Z'), 60_000).resetSeconds).toBe(1);
    expect(rateWindow(Date.parse('2025-01-01T00:01:00.000Z'), 60_000)).toMatchObject({ startMs: Date.parse('2025-01-01T00:01:00Z'), resetSeconds: 60 });
    expect(rateWindow(61_000, 60_000).index).toBe(rateWindow(119_999, 60_000).index);
    expect(rateWindow(120_000, 60_000).index).toBe(rateWindow(119_999, 60_000).index + 1);
  });
});

describe('grantSize', () => {
  it('takes an eighth of what is left, 1 to MAX_GRANT', () => {
    expect(grantSize(0, 1000)).toBe(MAX_GRANT);
    expect(grantSize(0, 120)).toBe(15);
    expect(grantSize(60, 120)).toBe(7);
    expect(grantSize(105, 120)).toBe(1);
    expect(grantSize(0, 10)).toBe(1);
    expect(grantSize(500, 10)).toBe(1);
  });
});

describe('stepCount', () => {
  it('grants up to take, never past the limit, then counts refusals one by one', () => {
    expect(stepCount(0, 5, 10)).toEqual({ count: 5, granted: 5 });
    expect(stepCount(8, 5, 10)).toEqual({ count: 10, granted: 2 });
    expect(stepCount(10, 5, 10)).toEqual({ count: 11, granted: 0 });
    expect(stepCount(11, 1, 10)).toEqual({ count: 12, granted: 0 });
  });
});

/** N processes' pre-checks over one shared count, stepped like the database statement does. */
function cluster(processes: number, limit: number) {
  let shared = 0;
  let roundTrips = 0;
  const caches = Array.from({ length: processes }, () => new GrantCache());
  const window = rateWindow(0, 60_000);
  return {
    get roundTrips() {
      return roundTrips;
    },
    hit(p: number) {
      const pre = caches[p].precheck('key:a', limit, window);
      if (pre.kind !== 'ask') return pre.decision;
      roundTrips += 1;
      const answer = stepCount(shared, pre.take, limit);
      shared = answer.count;
      return caches[p].record('key:a', limit, window, answer);
    },
  };
}

describe('GrantCache (the pre-check)', () => {
  it.each([1, 2, 3])('%i process(es), requests spread over them: exactly the limit admitted, one first refusal', (n) => {
    const c = cluster(n, 120);
    const decisions = Array.from({ length: 400 }, (_, i) => c.hit(i % n));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(120);
    expect(decisions.filter((d) => d.firstRefusal)).toHaveLength(1);
    // Every admitted request comes before every refused one, in each process.
    const firstRefused = decisions.findIndex((d) => !d.allowed);
    expect(decisions.slice(firstRefused).every((d) => !d.allowed)).toBe(true);
  });

  it('a client far under its limit makes one round trip per grant block, and none once refused', () => {
    const c = cluster(1, 1000);
    for (let i = 0; i < MAX_GRANT * 4; i++) expect(c.hit(0).allowed).toBe(true);
    expect(c.roundTrips).toBe(4);
    const small = cluster(1, 10);
    for (let i = 0; i < 50; i++) small.hit(0);
    // 10 granted one by one, then the refusal that records the first one; the rest none.
    expect(small.roundTrips).toBe(11);
  });

  it('what other processes took is never admitted here: grants not spent are lost, not borrowed', () => {
    const c = cluster(2, 120);
    // Process 0 takes a block of 15 and spends one; process 1 then spends everything else.
    c.hit(0);
    let admittedBy1 = 0;
    for (let i = 0; i < 200; i++) if (c.hit(1).allowed) admittedBy1 += 1;
    expect(admittedBy1).toBe(120 - 15);
    // Process 0 still holds 14 of its block.
    let admittedBy0 = 0;
    for (let i = 0; i < 20; i++) if (c.hit(0).allowed) admittedBy0 += 1;
    expect(admittedBy0).toBe(14);
  });

  it('RateLimit-Remaining counts the grants this process holds', () => {
    const cache = new GrantCache();
    const window = rateWindow(0, 60_000);
    const first = cache.record('b', 120, window, { count: 15, granted: 15 });
    expect(first).toMatchObject({ allowed: true, remaining: 119, limit: 120, resetSeconds: 60 });
    const pre = cache.precheck('b', 120, window);
    expect(pre).toMatchObject({ kind: 'allow', decision: { remaining: 118 } });
  });

  it('a new window starts every bucket again; a late answer for an old window changes nothing', () => {
    const cache = new GrantCache();
    const w0 = rateWindow(0, 60_000);
    const w1 = rateWindow(60_000, 60_000);
    cache.record('b', 2, w0, { count: 3, granted: 0 });
    expect(cache.precheck('b', 2, w0).kind).toBe('refuse');
    expect(cache.precheck('b', 2, w1)).toEqual({ kind: 'ask', take: 1 });
    cache.record('b', 2, w0, { count: 4, granted: 0 });
    expect(cache.precheck('b', 2, w1).kind).toBe('ask');
  });
});

describe('LocalWindowCounts', () => {
  it('counts per bucket in the window, first refusal once, remaining down to 0', () => {
    const counts = new LocalWindowCounts();
    const w = rateWindow(0, 60_000);
    const got = Array.from({ length: 4 }, () => counts.hit('b', 2, w));
    expect(got.map((d) => [d.allowed, d.remaining, d.firstRefusal])).toEqual([[true, 1, false], [true, 0, false], [false, 0, true], [false, 0, false]]);
    expect(counts.hit('other', 2, w).allowed).toBe(true);
    expect(counts.hit('b', 2, rateWindow(60_000, 60_000)).allowed).toBe(true);
  });
});
