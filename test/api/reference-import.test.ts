/**
 * Importing the reference system's export (issue 10): versioned records mixed with ours, keys
 * of both shapes, unknown versions and foreign keys skipped with a reason, never a 500.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { serversClosedAfterEach } from './helpers.js';
import { accepted, pollJob } from './jobs-support.js';
import { IMPORT_OF_EXPORT_V1 } from '../fixtures/reference/expected.js';

const start = serversClosedAfterEach();

const FIXTURE = new URL('../fixtures/reference/export-v1.json', import.meta.url);
const REF_KEY = 'patterns/3f2a9c1b_1731000000000_aB3-xY';
const FLAT_REF_KEY = 'patterns/9c1d2e3f_1731500000000_Zz-9_q';

async function fixtureRecords(): Promise<Record<string, unknown>[]> {
  return (JSON.parse(await readFile(FIXTURE, 'utf8')) as { records: Record<string, unknown>[] }).records;
}

describe('import of the reference export', () => {
  it('maps versioned records onto ours, keeps both key shapes, reports what it skipped', async () => {
    const t = await start();
    const res = await t.call('POST', '/v1/import', { records: await fixtureRecords() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(IMPORT_OF_EXPORT_V1);

    const exported = (await t.call('GET', '/v1/export')).json().records as Record<string, unknown>[];
    const byKey = new Map(exported.map((r) => [r.key, r]));
    expect([...byKey.keys()].sort()).toEqual([
      'patterns/0m2f3k9x000a1b2c3d', 'patterns/0m2f3k9x001a1b2c3d', REF_KEY, FLAT_REF_KEY,
    ].sort());
    const at = new Date(1731000000 * 1000).toISOString();
    expect(byKey.get(REF_KEY)).toMatchObject({
      task: 'parse a CSV file of customer orders into JSON records',
      output: '[{...}]',
      eval_score: 8.5,
      success_score: 8.5,
      reuse_count: 4,
      classification: 'internal',
      source: 'sdk',
      created_at: at,
      updated_at: at,
    });
    expect(byKey.get('patterns/0m2f3k9x000a1b2c3d')).toMatchObject({ output: null, source: 'import', classification: 'internal', reuse_count: 0 });
    expect(byKey.get(FLAT_REF_KEY)).toMatchObject({ classification: 'public', eval_score: 7.5 });

    // Recall finds imported patterns and answers their keys as imported.
    const recalled = (await t.call('POST', '/v1/recall', { task: 'parse a CSV file of customer orders into JSON records', readonly: true })).json();
    expect(recalled.matches[0]).toMatchObject({ pattern_key: REF_KEY, reuse_tier: 'duplicate' });

    // Importing again skips the existing keys and reports the unimportable ones again.
    const again = (await t.call('POST', '/v1/import', { records: await fixtureRecords() })).json();
    expect(again).toMatchObject({ imported: 0, skipped: 6, total: 6 });
    expect(again.skipped_records).toHaveLength(2);
  });

  it('reference-shaped keys work wherever a key is taken: skills, evaluate-free recall, delete', async () => {
    const t = await start();
    await t.call('POST', '/v1/import', { records: await fixtureRecords() });
    const reg = await t.call('POST', '/v1/skills/register', { pattern_key: FLAT_REF_KEY, skills: ['slack', 'deploy'] });
    expect(reg.statusCode).toBe(200);
    expect(reg.json()).toMatchObject({ pattern_key: FLAT_REF_KEY, registered: 2 });
    const found = (await t.call('POST', '/v1/skills/search', { required: ['slack'] })).json();
    expect(found.matches.map((m: { pattern_key: string }) => m.pattern_key)).toEqual([FLAT_REF_KEY]);

    const deleted = await t.call('DELETE', `/v1/patterns/${encodeURIComponent(REF_KEY)}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ deleted: true, pattern_key: REF_KEY });
    expect((await t.call('DELETE', `/v1/patterns/${encodeURIComponent(REF_KEY)}`)).statusCode).toBe(404);
  });

  it('a version-1 record with a bad field is a 422 naming it; nothing is imported', async () => {
    const t = await start();
    const good = (await fixtureRecords())[0];
    const bad = { version: 1, key: 'patterns/abc_1_x', data: { design: { code: 'x' }, success_score: 5, reuse_count: 0, timestamp: 1 } };
    const res = await t.call('POST', '/v1/import', { records: [good, bad] });
    expect(res.statusCode).toBe(422);
    expect(JSON.stringify(res.json())).toContain('records.1.data.task');
    const scoreOut = { ...bad, data: { ...bad.data, task: 't', success_score: 11 } };
    expect((await t.call('POST', '/v1/import', { records: [scoreOut] })).statusCode).toBe(422);
    // Flat records keep their own contract (a flat key must be a pattern key).
    expect((await t.call('POST', '/v1/import', { records: [{ key: 'feedback/x', task: 't', code: 'c', eval_score: 5 }] })).statusCode).toBe(422);
    expect((await t.call('GET', '/v1/export')).json().count).toBe(0);
  });

  it('the same records as an async job (its payload is parsed again when it runs)', async () => {
    const t = await start();
    const res = await t.call('POST', '/v1/import', { records: await fixtureRecords() }, { prefer: 'respond-async' });
    const job = await pollJob(t, accepted(res));
    expect(job.status).toBe('completed');
    expect(job.result).toMatchObject({ imported: 4, skipped: 2, total: 6, skipped_records: [{ index: 4 }, { index: 5 }] });
    expect((await t.call('GET', '/v1/export')).json().count).toBe(4);
  });

  it('takes an NDJSON body (overwrite in the query string); a bad line is 422; other routes still take JSON only', async () => {
    const t = await start();
    const text = await readFile(new URL('../fixtures/reference/export-governance.ndjson', import.meta.url), 'utf8');
    const post = (payload: string, url = '/v1/import') =>
      t.server.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-ndjson' }, payload });
    const res = await post(text);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ imported: 2, skipped: 0, total: 2 });
    expect((await post(text)).json()).toEqual({ imported: 0, skipped: 2, total: 2 });
    expect((await post(text, '/v1/import?overwrite=true')).json()).toEqual({ imported: 2, skipped: 0, total: 2 });
    expect((await post(text, '/v1/import?overwrite=maybe')).statusCode).toBe(422);
    expect((await post(text, '/v1/import?overwirte=true')).statusCode).toBe(422);

    const broken = await post(`${text}{oops\n`);
    expect(broken.statusCode).toBe(422);
    expect(broken.json().detail).toMatch(/line 3/);
    expect((await post('{"task":"t","code":"c","eval_score":5}', '/v1/learn')).statusCode).toBe(422);
  });
});
