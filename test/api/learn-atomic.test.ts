/**
 * Learn's writes are one transaction on PostgreSQL: when the database refuses the last of them
 * (the ROI event), the pattern insert or replacement, its eval observation and the run counter
 * roll back with it: no pattern without its observation, counters unchanged.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { adminQuery, requirePostgres } from '../support/pg.js';
import { bearer, perFileDatabase, provisionKey, startDbServer } from './db-auth-helpers.js';

const hasPg = await requirePostgres('learn atomicity');
const database = perFileDatabase('learnatomic');
const SCOPE: Scope = { tenant_id: 'default', project_id: 'default' };
const TASK = 'parse a CSV file and sum the second column';

/** Every learn-written row of the scope, read through the port. */
async function learnRows(storage: Storage) {
  const patterns = [];
  for await (const p of storage.patterns.iterate(SCOPE)) patterns.push(p);
  return {
    patterns,
    evals: Object.fromEntries(await storage.evals.recent(SCOPE, patterns.map((p) => p.id), 100)),
    metrics: await storage.metrics.get(SCOPE),
    events: await storage.analytics.list(SCOPE, { limit: 100 }),
  };
}

describe.skipIf(!hasPg)('learn on PostgreSQL: one transaction', () => {
  afterAll(() => database.drop());

  it('the ROI event refused by the database: no new pattern, no replacement, no observation, no count', async () => {
    const schema = await database.schema();
    const t = await startDbServer(schema.url, {}, {}, { runJobs: false });
    const auth = bearer((await provisionKey(t.keyStore, { tenant_id: 'default', project_id: 'default', role: 'owner' })).secret);
    const h = { app: t.app, call: (method: 'POST', url: string, body: unknown) => t.call(method, url, body, auth) };
    try {
      const first = await h.call('POST', '/v1/learn', { task: TASK, code: 'v1()', eval_score: 4 });
      expect(first.statusCode, first.body).toBe(200);
      const storage = h.app.deps.storage;
      const before = await learnRows(storage);
      expect(before.patterns).toHaveLength(1);
      expect(before.metrics.runs).toBe(1);

      // A failure the service cannot foresee: the database refuses every learn's ROI event.
      await adminQuery(
        `CREATE FUNCTION ${schema.schema}.refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'roi_events: disk says no'; END $$;
         CREATE TRIGGER refuse_event BEFORE INSERT ON ${schema.schema}.roi_events FOR EACH ROW EXECUTE FUNCTION ${schema.schema}.refuse_event();`,
        [], schema.url,
      );
      const better = await h.call('POST', '/v1/learn', { task: TASK, code: 'v2()', eval_score: 9 });
      expect(better.statusCode).toBe(500);
      const fresh = await h.call('POST', '/v1/learn', { task: 'resize every image in a folder to 640 pixels', code: 'r()', eval_score: 7 });
      expect(fresh.statusCode).toBe(500);
      expect(await learnRows(storage)).toEqual(before);

      await adminQuery(`DROP TRIGGER refuse_event ON ${schema.schema}.roi_events`, [], schema.url);
      const again = await h.call('POST', '/v1/learn', { task: TASK, code: 'v2()', eval_score: 9 });
      expect(again.json()).toMatchObject({ stored: true, pattern_count: 1 });
      const after = await learnRows(storage);
      expect(after.patterns[0]).toMatchObject({ code: 'v2()', success_score: 9 });
      expect(after.evals[after.patterns[0].id]).toEqual([9, 4]);
      expect(after.metrics).toMatchObject({ runs: 2, eval_sum: 13 });
      expect(after.events).toHaveLength(2);
    } finally {
      await t.close();
    }
  });
});
