/**
 * Lookups are activity too (docs/behavior.md "Recall" 7, "Analytics"), on both storages: a
 * read-only recall (GET, or POST with `readonly: true`, what the CLI, the console and MCP send)
 * leaves an ROI event marked `readonly: true` and counts no reuse; a counting recall's event is
 * `readonly: false`. The rollup counts both, says how many of each, and says how its ROI score
 * was made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';

const hasPg = await requirePostgres('recall lookups in analytics');
const database = perFileDatabase('lookups');

const TASK = 'Parse a CSV file from disk and compute the average value of the numeric price column';

for (const storage of ['json', 'postgres'] as const) {
  describe.skipIf(storage === 'postgres' && !hasPg)(`read-only recalls in the activity figures on ${storage}`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = storage === 'json' ? await jsonHarness() : await pgHarness(database);
      const learned = await h.call('POST', '/v1/learn', { task: TASK, code: 'def avg(path): ...', eval_score: 8 });
      expect(learned.json().stored).toBe(true);
    }, 60_000);
    afterAll(async () => {
      await h?.close();
      if (storage === 'postgres') await database.drop();
    });

    it('records every recall, lookups marked readonly, and counts reuse only for the counting one', async () => {
      const lookups = [
        await h.call('GET', `/v1/recall?task=${encodeURIComponent(TASK)}`),
        await h.call('GET', `/v1/recall?task=${encodeURIComponent('send an email when a backup fails')}`),
        await h.call('POST', '/v1/recall', { task: TASK, readonly: true }),
      ];
      for (const res of lookups) expect(res.statusCode, res.body).toBe(200);
      expect((await h.call('POST', '/v1/recall', { task: TASK })).statusCode).toBe(200);

      const events = (await h.call('GET', '/v1/analytics/events?limit=100')).json().events as { kind: string; readonly?: boolean; best_tier: string | null }[];
      const recalls = events.filter((e) => e.kind === 'recall');
      expect(recalls.map((e) => e.readonly).sort()).toEqual([false, true, true, true]);
      expect(recalls.filter((e) => e.best_tier === 'duplicate')).toHaveLength(3);
      // Lookups count no reuse: only the counting recall moved the pattern's reuse count and the metrics.
      const page = (await h.call('GET', '/v1/patterns')).json().patterns as { reuse_count: number }[];
      expect(page[0].reuse_count).toBe(1);
      expect((await h.call('GET', '/v1/metrics')).json().reuse_rate).toBe(1);
    });

    it('the rollup counts lookups and reuses and says how its ROI score is made', async () => {
      const res = await h.call('POST', '/v1/analytics/rollup', { window: 'daily' });
      expect(res.statusCode, res.body).toBe(200);
      const rollup = res.json();
      expect(rollup.recall).toMatchObject({ count: 4, lookups: 3, counted: 1, hits: 3 });
      expect(rollup.recall.hit_rate).toBe(0.75);
      expect(rollup.roi_basis).toContain('0.4 × hit rate 0.75');
      expect(rollup.roi_basis).toContain('4 recalls (3 read-only lookups, 1 counting reuse)');
      expect(rollup.roi_basis).toContain('1 learns');
      // The stored rollup reads back the same, basis included.
      expect((await h.call('GET', '/v1/analytics/rollup/daily')).json()).toEqual(rollup);
    });
  });
}
