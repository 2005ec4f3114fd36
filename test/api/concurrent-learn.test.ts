/**
 * Issue 18 (4): identical learns sent at once store one pattern, as they do one after another;
 * on PostgreSQL also when they arrive at two server processes sharing the database.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, NO_RATE_LIMITS } from './both-storages.js';
import { bearer, perFileDatabase, provisionKey, startDbServer } from './db-auth-helpers.js';

const hasPg = await requirePostgres('concurrent learns');
const database = perFileDatabase('conclearn');
const body = (i: number) => ({ task: 'deduplicate customer records by e-mail address', code: `dedupe_v${i}()`, eval_score: 5 });

describe('concurrent identical learns on JSON storage', () => {
  it('20 at once → one pattern', async () => {
    const h = await jsonHarness();
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => h.call('POST', '/v1/learn', body(i))));
      expect(answers.map((a) => a.statusCode)).toEqual(new Array(20).fill(200));
      expect(answers.filter((a) => a.json().stored)).toHaveLength(1);
      expect(new Set(answers.map((a) => a.json().pattern_key)).size).toBe(1);
      expect((await h.call('GET', '/v1/export')).json().count).toBe(1);
    } finally {
      await h.close();
    }
  });
});

describe.skipIf(!hasPg)('concurrent identical learns on PostgreSQL', () => {
  afterAll(() => database.drop());

  it('20 at once split over two server processes (apps) sharing the database → one pattern', async () => {
    const url = (await database.schema()).url;
    // A small pool, so holding a connection per waiting learn would exhaust it.
    const env = { ...NO_RATE_LIMITS, SERVICE_DB_POOL_MAX: '3' };
    const one = await startDbServer(url, env, {}, { runJobs: false });
    const two = await startDbServer(url, env, {}, { runJobs: false });
    try {
      const auth = bearer((await provisionKey(one.keyStore, { tenant_id: 'default', project_id: 'default', role: 'owner' })).secret);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).call('POST', '/v1/learn', body(i), auth)),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(new Array(20).fill(200));
      expect(answers.filter((a) => a.json().stored)).toHaveLength(1);
      expect((await one.call('GET', '/v1/export', undefined, auth)).json().count).toBe(1);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('learns in more scopes at once than the pool has connections all complete (no starvation)', async () => {
    const t = await startDbServer((await database.schema()).url, { ...NO_RATE_LIMITS, SERVICE_DB_POOL_MAX: '2' }, {}, { runJobs: false });
    try {
      const auths = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => bearer((await provisionKey(t.keyStore, { tenant_id: 'default', project_id: `p${i}`, role: 'editor' })).secret)),
      );
      const answers = await Promise.all(auths.map((auth, i) => t.call('POST', '/v1/learn', body(i), auth)));
      expect(answers.map((a) => a.statusCode)).toEqual(new Array(6).fill(200));
      expect(answers.every((a) => a.json().stored)).toBe(true);
    } finally {
      await t.close();
    }
  });
});
