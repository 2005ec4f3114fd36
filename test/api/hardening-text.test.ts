/**
 * Issue 18 regressions on both storages: (1) NUL and lone surrogates are refused with a 422
 * naming the field; (2) a task the model reduces to nothing is stored and found by keyword
 * recall, never a 500; (11) run_id and author are redacted like task, code and output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';

const hasPg = await requirePostgres('hardening: text and vectors');
const database = perFileDatabase('hardtext');

const EMOJI_TASK = '\u{1F600}\u{1F680}\u{1F525}';
const INVISIBLE_TASK = '\u200b\u00ad\u0301';

for (const storage of ['json', 'postgres'] as const) {
  describe.skipIf(storage === 'postgres' && !hasPg)(`text and vector hardening on ${storage}`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = storage === 'json' ? await jsonHarness() : await pgHarness(database);
    }, 60_000);
    afterAll(async () => {
      await h?.close();
      if (storage === 'postgres') await database.drop();
    });

    it('refuses NUL with a 422 naming the field, on learn, import and key names', async () => {
      const learn = await h.call('POST', '/v1/learn', { task: 'a\u0000b', code: 'x', eval_score: 5 });
      expect(learn.statusCode).toBe(422);
      expect(learn.json().detail).toMatch(/^invalid body: task: must not contain NUL/);
      const author = await h.call('POST', '/v1/learn', { task: 'ok task', code: 'x', eval_score: 5, author: 'me\u0000' });
      expect(author.json().errors).toEqual([{ path: 'author', message: expect.stringMatching(/NUL/) }]);
      const imp = await h.call('POST', '/v1/import', { records: [{ task: 'fine', code: 'x', eval_score: 5 }, { task: 't', code: 'c\u0000', eval_score: 5 }] });
      expect(imp.statusCode).toBe(422);
      expect(imp.json().errors[0].path).toBe('records.1.code');
      const surrogate = await h.call('POST', '/v1/recall', { task: 'half \ud83d of an emoji' });
      expect(surrogate.statusCode).toBe(422);
      expect(surrogate.json().detail).toMatch(/task: must be valid Unicode/);
      if (h.keysEnabled) {
        const key = await h.call('POST', '/v1/keys', { name: 'ci\u0000bot' });
        expect(key.statusCode).toBe(422);
        expect(key.json().errors[0].path).toBe('name');
      }
      // Nothing of the refused requests was stored.
      expect((await h.call('GET', '/v1/export')).json().count).toBe(0);
    });

    it('stores tasks without known tokens and finds them by keyword recall (POST, GET, import)', async () => {
      for (const task of [EMOJI_TASK, INVISIBLE_TASK]) {
        const learned = await h.call('POST', '/v1/learn', { task, code: `solve(${JSON.stringify(task)})`, eval_score: 6 });
        expect(learned.statusCode, learned.body).toBe(200);
        expect(learned.json().stored).toBe(true);
        const post = await h.call('POST', '/v1/recall', { task, readonly: true });
        expect(post.statusCode, post.body).toBe(200);
        expect(post.headers['x-recall-mode']).toBe('keyword');
        expect(post.json().matches[0]).toMatchObject({ pattern_key: learned.json().pattern_key, similarity: 1, pattern: { task } });
        const get = await h.call('GET', `/v1/recall?task=${encodeURIComponent(task)}`);
        expect(get.statusCode, get.body).toBe(200);
        expect(get.json().matches[0].pattern.task).toBe(task);
      }
      const imported = await h.call('POST', '/v1/import', { records: [{ key: 'patterns/emoji2', task: '\u{1F389}', code: 'party()', eval_score: 5 }] });
      expect(imported.statusCode, imported.body).toBe(200);
      // Semantic recall of ordinary text still works beside the zero vectors.
      await h.call('POST', '/v1/learn', { task: 'parse a CSV file and sum a column', code: 'csv()', eval_score: 8 });
      const normal = await h.call('POST', '/v1/recall', { task: 'sum a column of a CSV file', readonly: true });
      expect(normal.statusCode).toBe(200);
      expect(normal.headers['x-recall-mode']).toBeUndefined();
      expect(normal.json().matches[0].pattern.task).toBe('parse a CSV file and sum a column');
      for (const m of normal.json().matches as { similarity: number }[]) expect(Number.isFinite(m.similarity)).toBe(true);
    });

    it('redacts run_id and author on learn and import', async () => {
      const learned = await h.call('POST', '/v1/learn', {
        task: 'send the weekly digest e-mail', code: 'digest()', eval_score: 7, run_id: 'run for alice@example.com', author: 'alice@example.com',
      });
      expect(learned.json()).toMatchObject({ stored: true, redacted: true });
      await h.call('POST', '/v1/import', { records: [{ key: 'patterns/redact1', task: 'rotate logs', code: 'r()', eval_score: 5, author: 'bob@example.org', run_id: '10.1.2.3' }] });
      const records = (await h.call('GET', '/v1/export')).json().records as Record<string, unknown>[];
      const byKey = new Map(records.map((r) => [r.key, r]));
      expect(byKey.get(learned.json().pattern_key)).toMatchObject({ run_id: 'run for [REDACTED]', author: '[REDACTED]', redacted: true });
      expect(byKey.get('patterns/redact1')).toMatchObject({ run_id: '[REDACTED]', author: '[REDACTED]', redacted: true });
    });
  });
}
