/**
 * Import on PostgreSQL, through the HTTP API: a batch's writes overlap on pooled connections,
 * so the ordering rules of the import service (a key given twice is written in record order)
 * are exercised where they can actually race.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../server/app.js';
import { createApp, type App } from '../../src/app.js';
import { testConfig } from '../api/helpers.js';
import { tempDir } from '../support/env.js';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';

const hasPg = await requirePostgres('import on PostgreSQL');

describe.skipIf(!hasPg)('import (PostgreSQL)', () => {
  let db: TestDatabase;
  let app: App;
  let server: Awaited<ReturnType<typeof buildServer>>;
  let data: { path: string; remove(): Promise<void> };

  beforeAll(async () => {
    db = await createTestDatabase('import');
    const schema = await createMigratedSchema(db, 'import');
    data = await tempDir('svc-pg-import-');
    app = await createApp(testConfig(data.path, { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url }));
    server = await buildServer(app);
  });
  afterAll(async () => {
    await server?.close();
    await app?.close();
    await data?.remove();
    await db?.drop();
  });

  const post = (records: unknown[], overwrite: boolean, project: string) =>
    server.inject({
      method: 'POST', url: '/v1/import', headers: { 'content-type': 'application/json', 'x-project-id': project },
      payload: JSON.stringify({ records, overwrite }),
    });
  const exported = async (project: string) =>
    (await server.inject({ method: 'GET', url: '/v1/export', headers: { 'x-project-id': project } })).json().records as {
      key: string; code: string; eval_score: number; task: string;
    }[];

  it('imports a batch with overlapping writes; a key given twice keeps record order', async () => {
    const key = 'patterns/0000000000002def';
    const first = { key, task: 'Rotate the signing keys of the payment gateway', code: 'first', eval_score: 6 };
    const second = { ...first, code: 'second', eval_score: 9 };
    const others = Array.from({ length: 40 }, (_, i) => ({ task: `Bulk imported task ${i} for the archive`, code: `c${i}`, eval_score: 5 }));

    const replaced = await post([first, second, ...others], true, 'overwrite');
    expect(replaced.json()).toEqual({ imported: 42, skipped: 0, total: 42 });
    const records = await exported('overwrite');
    expect(records).toHaveLength(41);
    expect(records.find((r) => r.key === key)).toMatchObject({ code: 'second', eval_score: 9 });

    const plain = await post([first, second, ...others], false, 'plain');
    expect(plain.json()).toEqual({ imported: 41, skipped: 1, total: 42 });
    expect((await exported('plain')).find((r) => r.key === key)).toMatchObject({ code: 'first' });

    // Every imported task was embedded and is found again.
    const recall = await server.inject({
      method: 'POST', url: '/v1/recall', headers: { 'content-type': 'application/json', 'x-project-id': 'plain' },
      payload: JSON.stringify({ task: 'Bulk imported task 17 for the archive', readonly: true, limit: 1 }),
    });
    expect(recall.json().matches[0].pattern.task).toBe('Bulk imported task 17 for the archive');
  });

  it('keeps reference-shaped keys (migration 0004) and ranks by recency there too', async () => {
    const refKey = 'patterns/3f2a9c1b_1731000000000_aB3-xY';
    const freshKey = 'patterns/Fresh_4102444800_Zz-9';
    const records = [
      { version: 1, key: refKey, data: { task: 'parse a CSV file of customer orders into JSON records', design: { code: 'old()' }, success_score: 8, reuse_count: 3, timestamp: 1731000000 } },
      { version: 1, key: freshKey, data: { task: 'turn a spreadsheet export of orders into JSON objects', design: { code: 'new()' }, success_score: 8, reuse_count: 0, timestamp: 4102444800 } },
      { version: 3, key: 'patterns/later_1_x', data: {} },
    ];
    const res = await post(records, false, 'reference');
    expect(res.json()).toMatchObject({ imported: 2, skipped: 1, total: 3, skipped_records: [{ index: 2 }] });
    expect((await exported('reference')).map((r) => r.key).sort()).toEqual([freshKey, refKey].sort());

    const recall = async (extra: Record<string, unknown>) => (await server.inject({
      method: 'POST', url: '/v1/recall', headers: { 'content-type': 'application/json', 'x-project-id': 'reference' },
      payload: JSON.stringify({ task: 'parse a CSV file of customer orders into JSON records', readonly: true, eval_weighted: false, ...extra }),
    })).json().matches.map((m: { pattern_key: string }) => m.pattern_key);
    expect(await recall({})).toEqual([refKey, freshKey]);
    expect(await recall({ recency_weight: 1, recency_half_life_days: 30 })).toEqual([freshKey, refKey]);

    const deleted = await server.inject({ method: 'DELETE', url: `/v1/patterns/${encodeURIComponent(refKey)}`, headers: { 'x-project-id': 'reference' } });
    expect(deleted.json()).toEqual({ deleted: true, pattern_key: refKey });
  });
});
