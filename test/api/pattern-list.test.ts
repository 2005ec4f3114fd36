/**
 * GET /v1/patterns (+) on both storages: newest update first, keyset pages that together list
 * every pattern once, filters applied inside the listing, and bad input refused with a 422
 * naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';

const hasPg = await requirePostgres('pattern list');
const database = perFileDatabase('patlist');

/** Seven records with known update times; 3, 6 and 7 share one (ties go by key, descending). */
const RECORDS = [1, 2, 3, 4, 5, 6, 7].map((n) => ({
  key: `patterns/list${n}`,
  task: `list task ${n}: ${['parse dates', 'send mail', 'resize images', 'rotate logs', 'merge csv', 'hash files', 'zip folders'][n - 1]}`,
  code: `run(${n})`,
  eval_score: n,
  classification: n === 1 ? 'public' : 'internal',
  source: n === 2 ? 'cli' : 'api',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: `2026-01-0${[3, 6].includes(n) || n === 7 ? 3 : n}T12:00:00.000Z`,
}));
const NEWEST_FIRST = ['patterns/list5', 'patterns/list4', 'patterns/list7', 'patterns/list6', 'patterns/list3', 'patterns/list2', 'patterns/list1'];

for (const storage of ['json', 'postgres'] as const) {
  describe.skipIf(storage === 'postgres' && !hasPg)(`GET /v1/patterns on ${storage}`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = storage === 'json' ? await jsonHarness() : await pgHarness(database);
      const imported = await h.call('POST', '/v1/import', { records: RECORDS });
      expect(imported.json()).toMatchObject({ imported: 7 });
    }, 60_000);
    afterAll(async () => {
      await h?.close();
      if (storage === 'postgres') await database.drop();
    });

    const list = async (query: string) => {
      const res = await h.call('GET', `/v1/patterns${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { patterns: { key: string }[]; next_cursor: string | null };
    };

    it('lists newest update first, with the summary fields and no code', async () => {
      const page = await list('');
      expect(page.patterns.map((p) => p.key)).toEqual(NEWEST_FIRST);
      expect(page.next_cursor).toBeNull();
      expect(page.patterns[0]).toEqual({
        key: 'patterns/list5', task: RECORDS[4].task, classification: 'internal', source: 'api', success_score: 5, eval_score: 5,
        reuse_count: 0, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-05T12:00:00.000Z',
      });
    });

    it('pages with the cursor: every pattern once, in order, and the last page says it is the last', async () => {
      const seen: string[] = [];
      let query = '?limit=2';
      const cursors: (string | null)[] = [];
      for (;;) {
        const page = await list(query);
        seen.push(...page.patterns.map((p) => p.key));
        cursors.push(page.next_cursor);
        if (!page.next_cursor) break;
        query = `?limit=2&cursor=${encodeURIComponent(page.next_cursor)}`;
      }
      expect(seen).toEqual(NEWEST_FIRST);
      expect(cursors.map((c) => c === null)).toEqual([false, false, false, true]);
      // Exactly a page's worth left: no empty page after it.
      const lastTwo = await list(`?limit=3&cursor=${encodeURIComponent(cursors[1]!)}`);
      expect(lastTwo.patterns.map((p) => p.key)).toEqual(NEWEST_FIRST.slice(4));
      expect(lastTwo.next_cursor).toBeNull();
    });

    it('filters by classification, source, score and update time, together with paging', async () => {
      expect((await list('?classification=public')).patterns.map((p) => p.key)).toEqual(['patterns/list1']);
      expect((await list('?source=cli')).patterns.map((p) => p.key)).toEqual(['patterns/list2']);
      expect((await list('?min_score=4&max_score=6')).patterns.map((p) => p.key)).toEqual(['patterns/list5', 'patterns/list4', 'patterns/list6']);
      const between = await list(`?updated_after=${encodeURIComponent('2026-01-02T12:00:00Z')}&updated_before=2026-01-05T00:00:00Z&limit=2`);
      expect(between.patterns.map((p) => p.key)).toEqual(['patterns/list4', 'patterns/list7']);
      const rest = await list(`?updated_after=2026-01-02T12:00:00Z&updated_before=2026-01-05T00:00:00Z&limit=2&cursor=${encodeURIComponent(between.next_cursor!)}`);
      expect(rest.patterns.map((p) => p.key)).toEqual(['patterns/list6', 'patterns/list3']);
      expect(rest.next_cursor).toBeNull();
    });

    it('refuses bad input with a 422 naming the field', async () => {
      for (const [query, path] of [
        ['?limit=0', 'limit'], ['?limit=101', 'limit'], ['?cursor=not-a-cursor', 'cursor'],
        [`?cursor=${Buffer.from('["2026-01-01", "../etc"]').toString('base64url')}`, 'cursor'],
        ['?min_score=11', 'min_score'], ['?updated_after=yesterday', 'updated_after'], ['?classification=secret', 'classification'],
        ['?sort=asc', 'query'],
      ]) {
        const res = await h.call('GET', `/v1/patterns${query}`);
        expect(res.statusCode, query).toBe(422);
        expect(res.json().code).toBe('validation_failed');
        expect(res.json().errors.map((e: { path: string }) => e.path), query).toContain(path);
      }
    });
  });
}
