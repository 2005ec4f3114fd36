import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import type { Storage } from '../../src/ports/storage.js';
import { createMigratedSchema, createTestDatabase, pgConfig, requirePostgres, type TestDatabase } from '../support/pg.js';
import type { RoiEvent } from '../../src/core/types.js';
import { startGovServer, type GovServer } from './governance.helpers.js';
import { learnBody, ManualClock } from './helpers.js';

const T0 = '2025-06-01T10:00:00.000Z';
const T0_SECONDS = Date.parse(T0) / 1000;
const EDITOR = 'env.editor.default.*';
const READER = 'env.reader.default.*';

const CSV_TASK = 'Parse a CSV file from disk and compute the average value of the numeric price column';
const PDF_TASK = 'Render an invoice as a PDF document with the company logo in the page header';
const OTHER_TASK = 'Train a gradient boosted tree classifier on tabular churn data and report recall';

interface Recalled {
  matches: { similarity: number; reuse_tier: 'duplicate' | 'adapt' | 'fresh' }[];
}

/** The best match of a recall response, as the service records it in its ROI event. */
function best(body: Recalled): { similarity: number; tier: 'duplicate' | 'adapt' | 'fresh' | 'none' } {
  if (body.matches.length === 0) return { similarity: 0, tier: 'none' };
  const top = body.matches.reduce((b, m) => (m.similarity > b.similarity ? m : b));
  return { similarity: top.similarity, tier: top.reuse_tier };
}

function analyticsSuite(name: string, makeStorage?: () => Promise<Storage>): void {
  describe(`analytics over ${name} storage`, () => {
    const clock = new ManualClock(new Date(T0));
    let t: GovServer;
    const recalls: ReturnType<typeof best>[] = [];

    beforeAll(async () => {
      t = await startGovServer(clock, makeStorage ? { storage: await makeStorage() } : {});
    });
    afterAll(async () => {
      await t?.close();
    });

    it('answers 404 {detail} before a rollup was computed', async () => {
      const res = await t.call('GET', '/v1/analytics/rollup/hourly', READER);
      expect(res.statusCode).toBe(404);
      expect(res.json().detail).toMatch(/no hourly rollup has been computed/);
    });

    it('rolls up the learns and recalls of the window with hand-computed numbers', async () => {
      // A recall on the empty store: no match at all.
      recalls.push(best((await t.call('POST', '/v1/recall', EDITOR, { task: CSV_TASK })).json()));
      expect((await t.call('POST', '/v1/learn', EDITOR, learnBody(CSV_TASK, { eval_score: 8 }))).json().stored).toBe(true);
      expect((await t.call('POST', '/v1/learn', EDITOR, learnBody(PDF_TASK, { eval_score: 3 }))).json().stored).toBe(true);
      // Same task, lower score: near-identical, not stored.
      expect((await t.call('POST', '/v1/learn', EDITOR, learnBody(CSV_TASK, { eval_score: 6 }))).json().stored).toBe(false);
      recalls.push(best((await t.call('POST', '/v1/recall', EDITOR, { task: CSV_TASK })).json()));
      recalls.push(best((await t.call('POST', '/v1/recall', EDITOR, { task: OTHER_TASK })).json()));
      expect(recalls[0]).toEqual({ similarity: 0, tier: 'none' });
      expect(recalls[1].tier).toBe('duplicate');

      clock.advance(10 * 60_000);
      const res = await t.call('POST', '/v1/analytics/rollup', EDITOR, { window: 'hourly' });
      expect(res.statusCode).toBe(200);
      const rollup = res.json();

      const tiers = { duplicate: 0, adapt: 0, fresh: 0, none: 0 };
      for (const r of recalls) tiers[r.tier] += 1;
      const hits = tiers.duplicate + tiers.adapt;
      const meanSimilarity = recalls.reduce((s, r) => s + r.similarity, 0) / 3;
      const learnSuccess = 2 / 3; // eval scores 8, 3, 6: two are >= 5
      const expectedRoi = 10 * (0.4 * (hits / 3) + 0.3 * learnSuccess + 0.3 * meanSimilarity);

      expect(rollup).toMatchObject({
        window: 'hourly',
        computed_at: '2025-06-01T10:10:00.000Z',
        since: '2025-06-01T09:10:00.000Z',
        event_count: 6,
        learn: { count: 3, stored: 2, success_rate: learnSuccess },
        recall: { count: 3, hits, tiers },
        // ManualClock does not move during a request: every latency is 0 ms.
        percentiles: { samples: 6, p50: 0, p95: 0, p99: 0 },
      });
      expect(rollup.learn.avg_eval_score).toBeCloseTo(17 / 3, 10);
      expect(rollup.recall.hit_rate).toBeCloseTo(hits / 3, 10);
      expect(rollup.recall.mean_best_similarity).toBeCloseTo(meanSimilarity, 10);
      expect(rollup.roi_score).toBeCloseTo(expectedRoi, 10);
      expect(rollup.roi_score).toBeGreaterThanOrEqual(0);
      expect(rollup.roi_score).toBeLessThanOrEqual(10);

      const stored = await t.call('GET', '/v1/analytics/rollup/hourly', READER);
      expect(stored.statusCode).toBe(200);
      expect(stored.json()).toEqual(rollup);
      // Only the computed window exists.
      expect((await t.call('GET', '/v1/analytics/rollup/daily', READER)).statusCode).toBe(404);
    });

    it('counts only the window ending now, and a recompute replaces the stored rollup', async () => {
      // Events with latencies, written as the services write them, 2 h and 3 days before now.
      const now = clock.now().getTime();
      const at = (msAgo: number) => new Date(now - msAgo).toISOString();
      const extra: RoiEvent[] = [
        { at: at(2 * 3_600_000), kind: 'learn', stored: true, eval_score: 10, latency_ms: 40 },
        { at: at(2 * 3_600_000), kind: 'recall', best_similarity: 0.5, best_tier: 'fresh', matches: 2, latency_ms: 100 },
        { at: at(3 * 86_400_000), kind: 'learn', stored: true, eval_score: 1, latency_ms: 1000 },
      ];
      for (const e of extra) await t.app.deps.storage.analytics.append({ tenant_id: 'default', project_id: 'default' }, e);

      const daily = (await t.call('POST', '/v1/analytics/rollup', EDITOR, { window: 'daily' })).json();
      expect(daily.event_count).toBe(8);
      expect(daily.learn).toMatchObject({ count: 4, stored: 3 });
      expect(daily.learn.avg_eval_score).toBeCloseTo((8 + 3 + 6 + 10) / 4, 10);
      // Sorted latencies [0 ×6, 40, 100]: p50 = 0; p95 at rank 0.95 × 7 = 6.65 → 40 + 0.65 × 60 = 79;
      // p99 at rank 6.93 → 40 + 0.93 × 60 = 95.8.
      expect(daily.percentiles.samples).toBe(8);
      expect(daily.percentiles.p50).toBe(0);
      expect(daily.percentiles.p95).toBeCloseTo(79, 10);
      expect(daily.percentiles.p99).toBeCloseTo(95.8, 10);

      const weekly = (await t.call('POST', '/v1/analytics/rollup', EDITOR, { window: 'weekly' })).json();
      expect(weekly.event_count).toBe(9);

      // Two hours later the first six events left the hourly window.
      clock.advance(2 * 3_600_000);
      const hourly = (await t.call('POST', '/v1/analytics/rollup', EDITOR, { window: 'hourly' })).json();
      expect(hourly).toMatchObject({
        event_count: 0,
        roi_score: 0,
        recall: { count: 0, hits: 0, hit_rate: null, mean_best_similarity: null },
        learn: { count: 0, stored: 0, avg_eval_score: null, success_rate: null },
        percentiles: { samples: 0, p50: null, p95: null, p99: null },
      });
      expect((await t.call('GET', '/v1/analytics/rollup/hourly', READER)).json()).toEqual(hourly);
    });

    it('lists raw events newest first with limit and since (Unix seconds, inclusive)', async () => {
      const all = (await t.call('GET', '/v1/analytics/events', READER)).json();
      expect(all.count).toBe(9);
      expect(all.events).toHaveLength(9);
      const times = all.events.map((e: RoiEvent) => Date.parse(e.at));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      for (const e of all.events) expect(e).not.toHaveProperty('task');

      const two = (await t.call('GET', '/v1/analytics/events?limit=2', READER)).json();
      expect(two.count).toBe(2);

      const sinceT0 = (await t.call('GET', `/v1/analytics/events?since=${T0_SECONDS}&limit=1000`, READER)).json();
      expect(sinceT0.count).toBe(6);
      expect(sinceT0.events.every((e: RoiEvent) => e.at === T0)).toBe(true);
      expect((await t.call('GET', `/v1/analytics/events?since=${T0_SECONDS + 0.001}`, READER)).json().count).toBe(0);
    });

    it('refuses bad bounds and bad bodies with 422', async () => {
      for (const query of ['limit=0', 'limit=1001', 'limit=abc', 'limit=2.5', 'since=-1', 'since=soon', 'sinse=1']) {
        const res = await t.call('GET', `/v1/analytics/events?${query}`, READER);
        expect(res.statusCode, query).toBe(422);
        expect(res.json().detail, query).toEqual(expect.any(String));
      }
      expect((await t.call('GET', '/v1/analytics/events?limit=1000', READER)).statusCode).toBe(200);
      expect((await t.call('GET', '/v1/analytics/events?limit=1', READER)).statusCode).toBe(200);
      for (const body of [{}, { window: 'monthly' }, { window: 'daily', extra: 1 }]) {
        expect((await t.call('POST', '/v1/analytics/rollup', EDITOR, body)).statusCode).toBe(422);
      }
      expect((await t.call('GET', '/v1/analytics/rollup/monthly', READER)).statusCode).toBe(422);
    });

    it('needs analytics:rollup (editor) to compute and analytics:read (reader) to read', async () => {
      const denied = await t.call('POST', '/v1/analytics/rollup', READER, { window: 'daily' });
      expect(denied.statusCode).toBe(403);
      expect(denied.json().detail).toContain('analytics:rollup');
      expect((await t.call('GET', '/v1/analytics/events', READER)).statusCode).toBe(200);
    });

    it('keeps rollups and events per project', async () => {
      const other = { 'x-project-id': 'other' };
      expect((await t.call('GET', '/v1/analytics/rollup/daily', READER, undefined, other)).statusCode).toBe(404);
      expect((await t.call('GET', '/v1/analytics/events', READER, undefined, other)).json()).toEqual({ events: [], count: 0 });
      const empty = (await t.call('POST', '/v1/analytics/rollup', EDITOR, { window: 'daily' }, other)).json();
      expect(empty.event_count).toBe(0);
      // The default project's daily rollup is untouched.
      expect((await t.call('GET', '/v1/analytics/rollup/daily', READER)).json().event_count).toBe(8);
    });
  });
}

analyticsSuite('JSON');

const hasPg = await requirePostgres('analytics API on PostgreSQL');
let database: Promise<TestDatabase> | null = null;
afterAll(async () => {
  if (database) await (await database).drop();
});
if (hasPg) {
  analyticsSuite('PostgreSQL', async () => {
    database ??= createTestDatabase('analytics_api');
    const schema = await createMigratedSchema(await database);
    return createPostgresStorage(pgConfig(schema.url));
  });
}
