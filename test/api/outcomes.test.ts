/**
 * Outcomes over HTTP (docs/behavior.md "Outcomes"), on both storages: every recall answer
 * carries a recall_id (POST, GET, each line of a batch); POST /v1/outcomes reports against it
 * (404 unknown or past retention, 422 a key the recall did not return, the same pair replaces);
 * GET /v1/patterns/{key}/outcomes lists them; the retention run purges them; the reuse credit
 * setting moves the success score on outcomes instead of hits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';
import { ManualClock } from './helpers.js';

const hasPg = await requirePostgres('outcomes');
const database = perFileDatabase('outcomes');

const TASK = 'Parse a CSV file and sum the amount column per customer';
const OTHER = 'Resize every PNG image in a folder to a thumbnail';
const DAY = 86_400_000;

const outcomesOf = async (h: Harness, key: string) =>
  (await h.call('GET', `/v1/patterns/${encodeURIComponent(key)}/outcomes`)).json() as { outcomes: { recall_id: string; passed: boolean; detail: string | null; query: string }[] };

for (const storage of ['json', 'postgres'] as const) {
  describe.skipIf(storage === 'postgres' && !hasPg)(`outcomes on ${storage}`, () => {
    let h: Harness;
    const clock = new ManualClock(new Date());
    let key: string;
    let otherKey: string;

    beforeAll(async () => {
      h = storage === 'json' ? await jsonHarness({}, { clock }) : await pgHarness(database, {}, { clock });
      key = (await h.call('POST', '/v1/learn', { task: TASK, code: 'def sums(path): ...', eval_score: 8 })).json().pattern_key;
      otherKey = (await h.call('POST', '/v1/learn', { task: OTHER, code: 'def thumbs(dir): ...', eval_score: 8 })).json().pattern_key;
    }, 60_000);
    afterAll(async () => {
      await h?.close();
      if (storage === 'postgres') await database.drop();
    });

    it('every recall answer has its own recall_id: POST, GET and each batch line', async () => {
      const ids = [
        (await h.call('POST', '/v1/recall', { task: TASK })).json().recall_id,
        (await h.call('GET', `/v1/recall?task=${encodeURIComponent(TASK)}`)).json().recall_id,
        ...((await h.call('POST', '/v1/recall/batch', { requests: [{ task: TASK }, { task: OTHER }] })).json().results as { result: { recall_id: string } }[])
          .map((r) => r.result.recall_id),
      ];
      for (const id of ids) expect(id).toMatch(/^[0-9a-z]{18}$/);
      expect(new Set(ids).size).toBe(4);
    });

    it('reports against a recall, replaces the same pair, and lists it on the pattern', async () => {
      const recall = (await h.call('POST', '/v1/recall', { task: TASK, limit: 1 })).json();
      expect(recall.matches[0].pattern_key).toBe(key);
      const first = await h.call('POST', '/v1/outcomes', { recall_id: recall.recall_id, pattern_key: key, passed: false, score: 2, detail: 'misses the header row', source: 'tests' });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json()).toMatchObject({ recall_id: recall.recall_id, pattern_key: key, passed: false, score: 2, detail: 'misses the header row', source: 'tests', replaced: false });
      const again = await h.call('POST', '/v1/outcomes', { recall_id: recall.recall_id, pattern_key: key, passed: true });
      expect(again.json()).toMatchObject({ passed: true, score: null, detail: null, source: null, replaced: true });
      const listed = (await outcomesOf(h, key)).outcomes.filter((o) => o.recall_id === recall.recall_id);
      expect(listed).toEqual([expect.objectContaining({ recall_id: recall.recall_id, passed: true, query: TASK })]);
    });

    it('a read-only lookup\'s id is found by an outcome sent right after the answer', async () => {
      const lookup = (await h.call('GET', `/v1/recall?task=${encodeURIComponent(OTHER)}&limit=1`)).json();
      const res = await h.call('POST', '/v1/outcomes', { recall_id: lookup.recall_id, pattern_key: otherKey, passed: true });
      expect(res.statusCode, res.body).toBe(200);
    });

    it('404 for an unknown recall, 422 for a key the recall did not return, 422 for bad fields', async () => {
      const recall = (await h.call('POST', '/v1/recall', { task: TASK, limit: 1 })).json();
      const unknown = await h.call('POST', '/v1/outcomes', { recall_id: 'nosuchrecall', pattern_key: key, passed: true });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().detail).toContain('nosuchrecall');
      const notMatch = await h.call('POST', '/v1/outcomes', { recall_id: recall.recall_id, pattern_key: otherKey, passed: true });
      expect(notMatch.statusCode).toBe(422);
      expect(notMatch.json().detail).toContain('pattern_key');
      for (const bad of [
        { passed: 'yes' }, { passed: true, score: 11 }, { passed: true, detail: 'x'.repeat(2001) }, { passed: true, source: 'oracle' },
        { passed: true, extra: 1 }, { passed: true, recall_id: '../etc' },
      ]) {
        const res = await h.call('POST', '/v1/outcomes', { recall_id: recall.recall_id, pattern_key: key, ...bad });
        expect(res.statusCode, JSON.stringify(bad)).toBe(422);
      }
      expect((await h.call('GET', `/v1/patterns/${encodeURIComponent('patterns/nosuch')}/outcomes`)).statusCode).toBe(404);
    });

    it('a recall past the outcome retention is 404, and the retention run purges its trace and outcomes', async () => {
      const recall = (await h.call('POST', '/v1/recall', { task: OTHER, limit: 1 })).json();
      expect((await h.call('POST', '/v1/outcomes', { recall_id: recall.recall_id, pattern_key: otherKey, passed: false })).statusCode).toBe(200);
      const before = (await outcomesOf(h, otherKey)).outcomes.length;
      clock.advance(31 * DAY);
      expect((await h.call('POST', '/v1/outcomes', { recall_id: recall.recall_id, pattern_key: otherKey, passed: true })).statusCode).toBe(404);
      const applied = await h.call('POST', '/v1/governance/retention/apply', { dry_run: false });
      expect(applied.statusCode, applied.body).toBe(200);
      expect((await outcomesOf(h, otherKey)).outcomes.length).toBeLessThan(before);
      expect(await h.app.deps.storage.outcomes.getTrace({ tenant_id: 'default', project_id: 'default' }, recall.recall_id)).toBeNull();
    });
  });
}

describe('outcomes in the NDJSON export and import', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await jsonHarness();
  });
  afterAll(async () => h?.close());

  it('the governance export ends with the traces that have outcomes; importing it elsewhere restores them', async () => {
    const key = (await h.call('POST', '/v1/learn', { task: TASK, code: 'def sums(path): ...', eval_score: 8 })).json().pattern_key;
    const recall = (await h.call('POST', '/v1/recall', { task: TASK, limit: 1 })).json();
    await h.call('POST', '/v1/recall', { task: OTHER });
    await h.call('POST', '/v1/outcomes', { recall_id: recall.recall_id, pattern_key: key, passed: false, detail: 'header row' });
    const lines = (await h.call('GET', '/v1/governance/export')).body.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const outcomeLines = lines.filter((l) => l.type === 'outcomes');
    expect(outcomeLines).toHaveLength(1);
    expect(lines[lines.length - 1]).toMatchObject({
      type: 'outcomes', trace: { recall_id: recall.recall_id, query: TASK, pattern_keys: [key] },
      outcomes: [{ pattern_key: key, passed: false, detail: 'header row' }],
    });
    const records = lines.filter((l) => l.type === undefined);
    const copy = { 'x-project-id': 'copy' };
    const imported = await h.call('POST', '/v1/import', { records, outcomes: outcomeLines }, copy);
    expect(imported.statusCode, imported.body).toBe(200);
    expect(imported.json()).toMatchObject({ imported: 1, outcomes_imported: 1 });
    const listed = (await h.call('GET', `/v1/patterns/${encodeURIComponent(key)}/outcomes`, undefined, copy)).json();
    expect(listed.outcomes).toMatchObject([{ recall_id: recall.recall_id, passed: false, detail: 'header row', query: TASK }]);
    const trace = await h.app.deps.storage.outcomes.getTrace({ tenant_id: 'default', project_id: 'copy' }, recall.recall_id);
    const original = await h.app.deps.storage.outcomes.getTrace({ tenant_id: 'default', project_id: 'default' }, recall.recall_id);
    expect(trace).toEqual(original);
  });
});

describe('SERVICE_REUSE_CREDIT=on-outcome', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await jsonHarness({ SERVICE_REUSE_CREDIT: 'on-outcome' });
  });
  afterAll(async () => h?.close());

  it('a hit gives no credit; a reported success +0.1, a failure −0.1, a replaced report nothing more', async () => {
    const key = (await h.call('POST', '/v1/learn', { task: TASK, code: 'def sums(path): ...', eval_score: 8 })).json().pattern_key;
    const score = async () => (await h.call('GET', `/v1/patterns/${encodeURIComponent(key)}`)).json().success_score as number;
    const start = await score();
    const first = (await h.call('POST', '/v1/recall', { task: TASK })).json();
    expect(first.matches[0].reuse_tier).toBe('duplicate');
    expect(await score()).toBe(start);
    await h.call('POST', '/v1/outcomes', { recall_id: first.recall_id, pattern_key: key, passed: true });
    expect(await score()).toBeCloseTo(start + 0.1, 9);
    await h.call('POST', '/v1/outcomes', { recall_id: first.recall_id, pattern_key: key, passed: true });
    expect(await score()).toBeCloseTo(start + 0.1, 9);
    const second = (await h.call('POST', '/v1/recall', { task: TASK })).json();
    await h.call('POST', '/v1/outcomes', { recall_id: second.recall_id, pattern_key: key, passed: false });
    expect(await score()).toBeCloseTo(start, 9);
  });
});
