/**
 * A task holding one word longer than any keyword (core/bm25.ts MAX_KEYWORD_TERM_BYTES; here
 * 3,000 letters and digits PostgreSQL cannot compress into a btree entry) is learned and
 * imported alike on both storages, and found by its other words. PostgreSQL used to refuse
 * it: learn with 500, import with 503 "re-run" (which never helped).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incompressibleWord } from '../contract/storage.contract.fixtures.js';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';

const hasPg = await requirePostgres('long words');
const database = perFileDatabase('longword');
// The word is random letters and digits: redaction (which may take it for a secret) is off, so the word itself is stored.
const ENV = { SERVICE_REDACTION: 'false' };

for (const storage of ['json', 'postgres'] as const) {
  describe.skipIf(storage === 'postgres' && !hasPg)(`a word longer than any keyword on ${storage}`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = storage === 'json' ? await jsonHarness(ENV) : await pgHarness(database, ENV);
    }, 60_000);
    afterAll(async () => {
      await h?.close();
      if (storage === 'postgres') await database.drop();
    });

    it('learn and import store the pattern; recall finds it by its other words', async () => {
      const blob = incompressibleWord(3000);
      const tasks = [`decode the ${blob} telemetry payload`, `${blob}q archive of shipping manifests`];
      const learned = await h.call('POST', '/v1/learn', { task: tasks[0], code: 'decode()', eval_score: 7 });
      expect(learned.statusCode, learned.body).toBe(200);
      expect(learned.json()).toMatchObject({ stored: true, pattern_count: 1 });

      const imported = await h.call('POST', '/v1/import', {
        records: [{ key: 'patterns/longword1', task: tasks[1], code: 'archive()', eval_score: 6 }],
      });
      expect(imported.statusCode, imported.body).toBe(200);
      expect(imported.json()).toEqual({ imported: 1, skipped: 0, total: 1 });

      for (const [query, task] of [['decode telemetry payload', tasks[0]], ['archive shipping manifests', tasks[1]]]) {
        const recall = await h.call('POST', '/v1/recall', { task: query, readonly: true, limit: 1 });
        expect(recall.statusCode).toBe(200);
        expect(recall.json().matches[0].pattern.task).toBe(task);
      }
      const exported = (await h.call('GET', '/v1/export')).json();
      expect(exported.records.map((r: { task: string }) => r.task).sort()).toEqual([...tasks].sort());
    });
  });
}
