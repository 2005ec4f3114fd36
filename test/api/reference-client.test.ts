/**
 * What the reference system's stdlib REST client sends (issue 10) works unchanged: recall with
 * recency fields, skills with `required` and `registered`, body-less POSTs with a JSON content
 * type. Unknown fields are still refused with 422.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, learnBody, type TestServer, serversClosedAfterEach } from './helpers.js';

const start = serversClosedAfterEach();

const DAY = 86_400_000;

describe('recency-weighted recall', () => {
  /** Two patterns about the same thing: the closer wording learned long ago, the other recently. */
  async function agedPair(): Promise<{ t: TestServer; clock: ManualClock; oldKey: string; newKey: string }> {
    const clock = new ManualClock(new Date('2025-01-01T00:00:00.000Z'));
    const t = await start({}, { clock });
    const oldKey = (await t.call('POST', '/v1/learn', learnBody('parse a CSV file of customer orders into JSON'))).json().pattern_key;
    clock.set('2025-05-30T00:00:00.000Z');
    const newKey = (await t.call('POST', '/v1/learn', learnBody('convert a spreadsheet export of orders to JSON records'))).json().pattern_key;
    clock.set('2025-06-01T00:00:00.000Z');
    return { t, clock, oldKey, newKey };
  }
  const query = 'parse a CSV file of customer orders into JSON';

  it('without a weight ranks by similarity; with one the fresher pattern rises, tiers stay on raw similarity', async () => {
    const { t, oldKey, newKey } = await agedPair();
    const plain = (await t.call('POST', '/v1/recall', { task: query, readonly: true, eval_weighted: false })).json();
    expect(plain.matches.map((m: { pattern_key: string }) => m.pattern_key)).toEqual([oldKey, newKey]);

    // The reference client's body, field for field.
    const body = { task: query, limit: 5, deduplicate: true, eval_weighted: false, recency_weight: 1, recency_half_life_days: 7 };
    const res = await t.call('POST', '/v1/recall', body);
    expect(res.statusCode).toBe(200);
    const weighted = res.json();
    expect(weighted.matches.map((m: { pattern_key: string }) => m.pattern_key)).toEqual([newKey, oldKey]);
    const [fresh, old] = weighted.matches;
    expect(old.similarity).toBeCloseTo(plain.matches[0].similarity, 6);
    expect(old.reuse_tier).toBe(plain.matches[0].reuse_tier);
    // Recency multiplies the ranking score without it (the hybrid blend, issue 27).
    const unweighted = new Map(plain.matches.map((m: { pattern_key: string; score: number }) => [m.pattern_key, m.score]));
    // 151 days at a 7-day half-life: score = blend × 0.5^(151/7).
    expect(old.score).toBeCloseTo((unweighted.get(oldKey) as number) * 0.5 ** (151 / 7), 9);
    // Two days old: factor 0.5^(2/7).
    expect(fresh.score).toBeCloseTo((unweighted.get(newKey) as number) * 0.5 ** (2 / 7), 9);
  });

  it('GET recall takes the same fields from the query string; bad values are 422', async () => {
    const { t, oldKey, newKey } = await agedPair();
    const q = encodeURIComponent(query);
    const res = await t.call('GET', `/v1/recall?task=${q}&eval_weighted=false&recency_weight=1&recency_half_life_days=7`);
    expect(res.statusCode).toBe(200);
    expect(res.json().matches.map((m: { pattern_key: string }) => m.pattern_key)).toEqual([newKey, oldKey]);
    // Half weight and a long half-life: age barely matters, similarity order again.
    const gentle = await t.call('GET', `/v1/recall?task=${q}&eval_weighted=false&recency_weight=0.5&recency_half_life_days=3650`);
    expect(gentle.json().matches.map((m: { pattern_key: string }) => m.pattern_key)).toEqual([oldKey, newKey]);

    for (const bad of ['recency_weight=1.5', 'recency_weight=-0.1', 'recency_half_life_days=0', 'recency_half_life_days=-3']) {
      expect((await t.call('GET', `/v1/recall?task=${q}&${bad}`)).statusCode).toBe(422);
    }
    expect((await t.call('POST', '/v1/recall', { task: query, recency_weight: 2 })).statusCode).toBe(422);
    expect((await t.call('POST', '/v1/recall', { task: query, recency_half_life_days: 0 })).statusCode).toBe(422);
  });

  it('age counts from the last update: re-learning the old task refreshes it', async () => {
    const { t, clock, oldKey, newKey } = await agedPair();
    // A better score for the near-identical task updates the existing pattern (same key).
    const again = (await t.call('POST', '/v1/learn', learnBody(query, { eval_score: 9.5 }))).json();
    expect(again.pattern_key).toBe(oldKey);
    clock.advance(DAY);
    const res = await t.call('POST', '/v1/recall', { task: query, readonly: true, eval_weighted: false, recency_weight: 1, recency_half_life_days: 7 });
    expect(res.json().matches.map((m: { pattern_key: string }) => m.pattern_key)).toEqual([oldKey, newKey]);
  });
});

describe('skills as the reference client uses them', () => {
  it('register answers registered (unique tags now on the pattern); search takes required or skills', async () => {
    const t = await start();
    const a = (await t.call('POST', '/v1/learn', learnBody('upload build artifacts to object storage'))).json().pattern_key;
    const b = (await t.call('POST', '/v1/learn', learnBody('send a slack message when a deploy fails'))).json().pattern_key;
    const reg = await t.call('POST', '/v1/skills/register', { pattern_key: a, skills: ['S3', 'upload', ' s3 ', 'ci'] });
    expect(reg.statusCode).toBe(200);
    expect(reg.json()).toEqual({ pattern_key: a, skills: ['s3', 'upload', 'ci'], registered: 3 });
    expect((await t.call('POST', '/v1/skills/register', { pattern_key: b, skills: ['ci', 'slack'] })).json().registered).toBe(2);

    const all = await t.call('POST', '/v1/skills/search', { required: ['ci', 's3'], match_all: true });
    expect(all.statusCode).toBe(200);
    expect(all.json().matches.map((m: { pattern_key: string }) => m.pattern_key)).toEqual([a]);
    const any = (await t.call('POST', '/v1/skills/search', { required: ['slack', 's3'] })).json();
    expect(any.count).toBe(2);
    expect((await t.call('POST', '/v1/skills/search', { skills: ['slack'] })).json().count).toBe(1);

    const both = await t.call('POST', '/v1/skills/search', { skills: ['ci'], required: ['ci'] });
    expect(both.statusCode).toBe(422);
    expect(both.json().detail).toMatch(/either skills or required/);
    expect((await t.call('POST', '/v1/skills/search', { match_all: true })).statusCode).toBe(422);
    expect((await t.call('POST', '/v1/skills/search', { requierd: ['ci'] })).statusCode).toBe(422);
  });
});

describe('body-less POSTs', () => {
  const bare = (t: TestServer, url: string, headers: Record<string, string>) => t.server.inject({ method: 'POST', url, headers });

  it('accept a JSON content type with no body, an empty body or {}; anything else is 422', async () => {
    const t = await start();
    await t.call('POST', '/v1/learn', learnBody('rotate nightly database backups'));
    const paths = ['/v1/aging', '/v1/feedback/decay', '/v1/analyze-failures', '/v1/governance/retention/apply'];
    for (const url of paths) {
      const variants: Record<string, string>[] = [{ 'content-type': 'application/json' }, { 'content-type': 'application/json', 'content-length': '0' }, {}];
      for (const headers of variants) {
        const res = await bare(t, url, headers);
        expect({ url, headers, status: res.statusCode }).toEqual({ url, headers, status: 200 });
      }
      expect((await t.call('POST', url, {})).statusCode).toBe(200);
      expect((await t.call('POST', url, { typo: true })).statusCode).toBe(422);
    }
    expect((await bare(t, '/v1/aging', { 'content-type': 'application/json' })).json()).toMatchObject({ pruned: 0, remaining: 1 });
  });

  it('unknown fields are still refused on the reference-compatible operations', async () => {
    const t = await start();
    expect((await t.call('POST', '/v1/recall', { task: 'x', recency_wieght: 1 })).statusCode).toBe(422);
    expect((await t.call('POST', '/v1/skills/register', { pattern_key: 'patterns/abc', skills: ['x'], extra: 1 })).statusCode).toBe(422);
  });
});
