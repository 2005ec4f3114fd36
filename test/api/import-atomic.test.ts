/**
 * Issue 18 (3): an import is checked whole before anything is written, a PostgreSQL failure
 * mid-batch rolls the batch back, and a failure answers with exactly what was written.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../../src/ports/embedder.js';
import { systemContext } from '../../src/services/audit.js';
import { jobOperation } from '../../src/services/job-operations.js';
import { adminQuery, requirePostgres } from '../support/pg.js';
import { jsonHarness } from './both-storages.js';
import { bearer, perFileDatabase, provisionKey, startDbServer } from './db-auth-helpers.js';

const hasPg = await requirePostgres('import atomicity');
const database = perFileDatabase('importatomic');

const records = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ key: `patterns/imp${from + i}`, task: `imported task number ${from + i}`, code: `f${i}()`, eval_score: 5 }));

describe.skipIf(!hasPg)('import on PostgreSQL', () => {
  afterAll(() => database.drop());

  it('a row the database refuses every time rolls its whole batch back; 500 (never 503 "re-run") with what was written', async () => {
    const schema = await database.schema();
    // A storage failure the contract cannot foresee: the database refuses one row of the second batch.
    await adminQuery(
      `CREATE FUNCTION ${schema.schema}.refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN IF NEW.task LIKE '%number 100' THEN RAISE EXCEPTION 'disk says no'; END IF; RETURN NEW; END $$;
       CREATE TRIGGER refuse_boom BEFORE INSERT ON ${schema.schema}.patterns FOR EACH ROW EXECUTE FUNCTION ${schema.schema}.refuse_boom();`,
      [], schema.url,
    );
    const t = await startDbServer(schema.url, {}, {}, { runJobs: false });
    try {
      const auth = bearer((await provisionKey(t.keyStore, { tenant_id: 'default', project_id: 'default', role: 'owner' })).secret);
      const res = await t.call('POST', '/v1/import', { records: records(200) }, auth);
      // The same request would fail the same way: not an outage, so no 503 and no advice to re-run.
      expect(res.statusCode).toBe(500);
      // Batches of 64: the first (0-63) is in, the second (64-127) holds the bad row and is rolled back.
      expect(res.json()).toMatchObject({
        code: 'internal_error', detail: 'internal error', imported: 64, skipped: 0, total: 200, last_written: { index: 63, key: 'patterns/imp63' },
      });
      const exported = (await t.call('GET', '/v1/export', undefined, auth)).json();
      expect(exported.count).toBe(64);
    } finally {
      await t.close();
    }
  });

  it('a pattern quota the whole import would pass refuses it before writing anything', async () => {
    const t = await startDbServer((await database.schema()).url, {}, {}, { runJobs: false });
    try {
      const auth = bearer((await provisionKey(t.keyStore, { tenant_id: 'default', project_id: 'default', role: 'editor', max_patterns: 100 })).secret);
      const res = await t.call('POST', '/v1/import', { records: records(150) }, auth);
      expect(res.statusCode).toBe(429);
      expect(res.json()).toMatchObject({ error: 'quota_exceeded', current: 0, limit: 100 });
      expect(await t.app.deps.storage.patterns.count({ tenant_id: 'default', project_id: 'default' })).toBe(0);
    } finally {
      await t.close();
    }
  });
});

describe('import on JSON storage', () => {
  it('an embedder failing at the third batch: 503 naming the exact count written', async () => {
    let calls = 0;
    const h = await jsonHarness({}, {});
    const real = h.app.deps.embedder;
    const flaky: Embedder = {
      info: real.info,
      embed: (texts) => (++calls === 3 ? Promise.reject(new Error('model crashed')) : real.embed(texts)),
    };
    Object.assign(h.app.deps, { embedder: flaky });
    try {
      const res = await h.call('POST', '/v1/import', { records: records(200) });
      expect(res.statusCode).toBe(503);
      expect(res.json().detail).toMatch(/128 of 200 records were written \(0 skipped\), the rest were not/);
      expect((await h.call('GET', '/v1/export')).json().count).toBe(128);
    } finally {
      await h.close();
    }
  });
});

describe('import job re-runs (issue 18, 7)', () => {
  it('running the same import job twice (a re-run after a crash) stores each keyless record once', async () => {
    const h = await jsonHarness();
    try {
      const keyless = Array.from({ length: 70 }, (_, i) => ({ task: `keyless imported task ${i}`, code: `k${i}()`, eval_score: 6 }));
      const op = jobOperation('import')!;
      const scope = { tenant_id: 'default', project_id: 'default' };
      const input = { records: keyless, overwrite: false };
      const first = await op.run(h.app.deps, scope, input, systemContext, { job_id: 'job0000000000abc12' });
      expect(first).toEqual({ imported: 70, skipped: 0, total: 70 });
      const rerun = await op.run(h.app.deps, scope, input, systemContext, { job_id: 'job0000000000abc12' });
      expect(rerun).toEqual({ imported: 0, skipped: 70, total: 70 });
      expect((await h.call('GET', '/v1/export')).json().count).toBe(70);
      // Another job with the same records is another import: its records are its own.
      await op.run(h.app.deps, scope, { records: keyless.slice(0, 2), overwrite: false }, systemContext, { job_id: 'job0000000000abc13' });
      expect((await h.call('GET', '/v1/export')).json().count).toBe(72);
    } finally {
      await h.close();
    }
  });
});
