/**
 * GET /v1/patterns paging at the stored precision, on both storages: 1,000 imported patterns
 * whose updated_at carry 0-9 fractional digits (many of them equal) are each listed exactly
 * once at limits 1, 7 and 100. Times are validated and normalised on input the same way on
 * both storages (one form: UTC, milliseconds, years 0001-9999), a cursor the service wrote
 * always fits the query's 200 characters, and any cursor it did not write is a 422 naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';

const hasPg = await requirePostgres('pattern list paging');
const database = perFileDatabase('patpaging');

const COUNT = 1000;
/** Distinct keys in an order unrelated to time (7919 is prime to 1000). */
const keyOf = (i: number) => `patterns/pg${String((i * 7919) % COUNT).padStart(4, '0')}`;

/**
 * 40 seconds of 25 records each; within a second, 0-9 fractional digits (what Python's
 * isoformat() and other writers produce), so records 20 apart share their exact time and many
 * more share a millisecond.
 */
function updatedAt(i: number): string {
  const second = String(Math.floor(i / 25)).padStart(2, '0');
  const digits = i % 10;
  const fraction = `5${String(i % 4).repeat(8)}`.slice(0, digits);
  return `2026-03-01T10:00:${second}${digits ? `.${fraction}` : ''}+00:00`;
}
/** The same instant in the one stored form: UTC, milliseconds cut (not rounded). */
function stored(iso: string): string {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?\+00:00$/.exec(iso)!;
  return `${m[1]}.${(m[2] ?? '').slice(0, 3).padEnd(3, '0')}Z`;
}

const RECORDS = Array.from({ length: COUNT }, (_, i) => ({
  key: keyOf(i),
  task: `Paging record ${i} of the precision corpus, variant ${i % 4}`,
  code: `def record_${i}():\n    return ${i}\n`,
  eval_score: 7,
  created_at: updatedAt(i),
  updated_at: updatedAt(i),
}));

/** Newest stored time first, ties by key descending (byte order): what every page must follow. */
const EXPECTED = RECORDS.map((r) => ({ key: r.key, at: stored(r.updated_at) })).sort(
  (a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.key < b.key ? 1 : a.key > b.key ? -1 : 0),
);

type Page = { patterns: { key: string; updated_at: string; created_at: string }[]; next_cursor: string | null };

for (const storage of ['json', 'postgres'] as const) {
  describe.skipIf(storage === 'postgres' && !hasPg)(`GET /v1/patterns paging on ${storage}`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = storage === 'json' ? await jsonHarness() : await pgHarness(database);
      const imported = await h.call('POST', '/v1/import', { records: RECORDS });
      expect(imported.statusCode, imported.body).toBe(200);
      expect(imported.json()).toMatchObject({ imported: COUNT, skipped: 0 });
    }, 180_000);
    afterAll(async () => {
      await h?.close();
      if (storage === 'postgres') await database.drop();
    });

    const page = async (query: string): Promise<Page> => {
      const res = await h.call('GET', `/v1/patterns${query}`);
      expect(res.statusCode, `${query}: ${res.body}`).toBe(200);
      return res.json() as Page;
    };

    /** Every page of a listing (the keys in order), checking each cursor's length on the way. */
    async function listAll(limit: number, extra = ''): Promise<string[]> {
      const keys: string[] = [];
      let cursor: string | null = null;
      for (;;) {
        const res: Page = await page(`?limit=${limit}${extra}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        keys.push(...res.patterns.map((p) => p.key));
        if (res.next_cursor === null) return keys;
        expect(res.next_cursor.length).toBeLessThanOrEqual(200);
        cursor = res.next_cursor;
      }
    }

    it.each([1, 7, 100])('lists each of 1,000 patterns exactly once, in order, at limit %i', async (limit) => {
      const keys = await listAll(limit);
      expect(new Set(keys).size).toBe(COUNT);
      expect(keys).toEqual(EXPECTED.map((e) => e.key));
    }, 180_000);

    it('answers every imported time in the one stored form (UTC, milliseconds)', async () => {
      const all = await page('?limit=100');
      for (const p of all.patterns) {
        const i = RECORDS.findIndex((r) => r.key === p.key);
        expect(p.updated_at).toBe(stored(RECORDS[i].updated_at));
        expect(p.created_at).toBe(stored(RECORDS[i].created_at));
      }
    });

    it('keeps paging when imported times carry 120 fractional digits and other offsets', async () => {
      const records = [1, 2, 3].map((n) => ({
        key: `patterns/long${n}`, task: `Long fraction record ${n} for cursor length`, code: `pass  # ${n}`, eval_score: 5,
        updated_at: `2026-04-0${n}T12:00:00.${String(n).repeat(120)}+05:30`,
      }));
      const imported = await h.call('POST', '/v1/import', { records });
      expect(imported.statusCode, imported.body).toBe(200);
      // April only: the corpus above is from March.
      const april = '&updated_after=2026-04-01T00:00:00Z&updated_before=2026-05-01T00:00:00Z';
      const keys: string[] = [];
      const times: string[] = [];
      let cursor: string | null = null;
      for (;;) {
        const body: Page = await page(`?limit=1${april}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        keys.push(...body.patterns.map((p) => p.key));
        times.push(...body.patterns.map((p) => p.updated_at));
        if (body.next_cursor === null) break;
        expect(body.next_cursor.length).toBeLessThanOrEqual(200);
        cursor = body.next_cursor;
      }
      expect(keys).toEqual(['patterns/long3', 'patterns/long2', 'patterns/long1']);
      expect(times).toEqual(['2026-04-03T06:30:00.333Z', '2026-04-02T06:30:00.222Z', '2026-04-01T06:30:00.111Z']);
    });

    it('refuses times outside 0001-9999 (UTC) with a 422 naming the field, storing nothing', async () => {
      const before = (await page('?limit=1')).patterns;
      const base = { key: 'patterns/outofrange', task: 'Out of range time record', code: 'pass', eval_score: 5 };
      for (const [field, value] of [
        ['updated_at', '0000-01-01T00:00:00Z'], ['created_at', '0000-06-30T12:00:00.5Z'], ['expires_at', '0000-12-31T23:59:59Z'],
        ['updated_at', '0001-01-01T00:30:00+01:00'], ['updated_at', '9999-12-31T23:30:00-01:00'],
      ]) {
        const res = await h.call('POST', '/v1/import', { records: [{ ...base, [field]: value }] });
        expect(res.statusCode, `${field}=${value}: ${res.body}`).toBe(422);
        expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(`records.0.${field}`);
      }
      const learn = await h.call('POST', '/v1/learn', { task: 'Learn with a year zero expiry', code: 'pass', eval_score: 5, expires_at: '0000-01-01T00:00:00Z' });
      expect(learn.statusCode, learn.body).toBe(422);
      expect(learn.json().errors.map((e: { path: string }) => e.path)).toContain('expires_at');
      for (const field of ['updated_after', 'updated_before']) {
        const res = await h.call('GET', `/v1/patterns?${field}=0000-01-01T00:00:00Z`);
        expect(res.statusCode, `${field}: ${res.body}`).toBe(422);
        expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(field);
      }
      expect((await page('?limit=1')).patterns).toEqual(before);
      expect((await h.call('GET', `/v1/patterns/${encodeURIComponent(base.key)}`)).statusCode).toBe(404);
    });

    it('accepts the range ends and lists them first and last, one per page', async () => {
      const records = [
        { key: 'patterns/earliest', task: 'Earliest storable time record', code: 'pass', eval_score: 5, updated_at: '0001-01-01T00:00:00Z' },
        { key: 'patterns/latest', task: 'Latest storable time record', code: 'pass', eval_score: 5, updated_at: '9999-12-31T23:59:59.999999999Z' },
      ];
      expect((await h.call('POST', '/v1/import', { records })).statusCode).toBe(200);
      const first = await page('?limit=1');
      expect(first.patterns.map((p) => [p.key, p.updated_at])).toEqual([['patterns/latest', '9999-12-31T23:59:59.999Z']]);
      const second = await page(`?limit=1&cursor=${encodeURIComponent(first.next_cursor!)}`);
      expect(second.patterns.map((p) => p.key)).toEqual(['patterns/long3']);
      const last = await page(`?limit=1&updated_before=0002-01-01T00:00:00Z`);
      expect(last.patterns.map((p) => [p.key, p.updated_at])).toEqual([['patterns/earliest', '0001-01-01T00:00:00.000Z']]);
      expect(last.next_cursor).toBeNull();
      expect(await listAll(100)).toHaveLength(COUNT + 5);
    });

    it('answers 422 naming cursor for any cursor it did not write', async () => {
      const real = (await page('?limit=1')).next_cursor!;
      const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const [at, id] = JSON.parse(Buffer.from(real, 'base64url').toString('utf8')) as [string, string];
      const forged = [
        b64(['0000-01-01T00:00:00.000Z', id]), // year zero: outside PostgreSQL's range
        b64(['-000001-01-01T00:00:00.000Z', id]),
        b64(['+275760-09-13T00:00:00.000Z', id]),
        b64(['1', id]), // Date.parse reads it as 2001
        b64(['2026-03-01', id]),
        b64(['2026-03-01T10:00:00Z', id]), // a time, but not in the written form
        b64([`${at.slice(0, -1)}123456Z`, id]),
        b64([at, '../etc/passwd']),
        b64([at, id, 'extra']),
        b64({ updated_at: at, id }),
        b64([at, 42]),
        `${real}=`, // padding: decodes the same, not what the service wrote
        `${real.slice(0, -1)}${real.endsWith('A') ? 'B' : 'A'}`,
        'not-a-cursor',
      ];
      for (const cursor of forged) {
        const res = await h.call('GET', `/v1/patterns?cursor=${encodeURIComponent(cursor)}`);
        expect(res.statusCode, `${cursor}: ${res.body}`).toBe(422);
        expect(res.json().code).toBe('validation_failed');
        expect(res.json().errors.map((e: { path: string }) => e.path)).toContain('cursor');
      }
      expect((await h.call('GET', `/v1/patterns?cursor=${encodeURIComponent(real)}`)).statusCode).toBe(200);
    });
  });
}
