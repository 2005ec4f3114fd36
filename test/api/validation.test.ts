import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { learnBody, startServer, type TestServer } from './helpers.js';

/** Every bound of docs/behavior.md "Limits" answers 422 {detail, errors} and stores nothing. */
describe('request validation', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ SERVICE_MAX_BODY_SIZE: '4096' });
  });
  afterAll(async () => {
    await t.close();
  });

  const patternCount = async () => (await t.call('GET', '/v1/health')).json().pattern_count as number;

  function expect422(res: { statusCode: number; json(): Record<string, unknown>; headers: Record<string, unknown> }, path?: string) {
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(typeof body.detail).toBe('string');
    expect(body.request_id).toBe(res.headers['x-request-id']);
    expect(Array.isArray(body.errors)).toBe(true);
    if (path) expect((body.errors as { path: string }[]).map((e) => e.path)).toContain(path);
  }

  // (The 10,001-char task and 10,001 import records need the default body size: see below.)
  const badLearns: [string, Record<string, unknown>, string][] = [
    ['empty task', learnBody(''), 'task'],
    ['blank task', learnBody('   \n\t '), 'task'],
    ['blank code', learnBody('fine task', { code: '  ' }), 'code'],
    ['eval_score 11', learnBody('fine task', { eval_score: 11 }), 'eval_score'],
    ['eval_score -1', learnBody('fine task', { eval_score: -1 }), 'eval_score'],
    ['eval_score as text', learnBody('fine task', { eval_score: '8' }), 'eval_score'],
    ['missing eval_score', { task: 'fine task', code: 'x' }, 'eval_score'],
    ['unknown classification', learnBody('fine task', { classification: 'secret' }), 'classification'],
    ['unknown source', learnBody('fine task', { source: 'email' }), 'source'],
    ['unknown field', learnBody('fine task', { tenant_id: 'other' }), 'body'],
  ];
  for (const [name, body, path] of badLearns) {
    it(`learn: ${name} → 422, nothing stored`, async () => {
      expect422(await t.call('POST', '/v1/learn', body), path);
      expect(await patternCount()).toBe(0);
    });
  }

  const badRecalls: [string, Record<string, unknown>, string][] = [
    ['limit 0', { task: 'x', limit: 0 }, 'limit'],
    ['limit 51', { task: 'x', limit: 51 }, 'limit'],
    ['limit 2.5', { task: 'x', limit: 2.5 }, 'limit'],
    ['offset -1', { task: 'x', offset: -1 }, 'offset'],
    ['min_score 10.5', { task: 'x', min_score: 10.5 }, 'min_score'],
    ['min_score -0.1', { task: 'x', min_score: -0.1 }, 'min_score'],
    ['blank task', { task: ' ' }, 'task'],
    ['unknown classification', { task: 'x', classification: 'top-secret' }, 'classification'],
  ];
  for (const [name, body, path] of badRecalls) {
    it(`recall: ${name} → 422`, async () => {
      expect422(await t.call('POST', '/v1/recall', body), path);
    });
  }

  it('GET recall validates its query string the same way', async () => {
    expect422(await t.call('GET', '/v1/recall?task=x&limit=0'), 'limit');
    expect422(await t.call('GET', '/v1/recall?task=x&limit=51'), 'limit');
    expect422(await t.call('GET', '/v1/recall?limit=5'), 'task');
    expect422(await t.call('GET', '/v1/recall?task=x&deduplicate=maybe'), 'deduplicate');
  });

  it('malformed JSON → 422', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/v1/learn', headers: { 'content-type': 'application/json' }, payload: '{"task": "x",' });
    expect422(res, 'body');
    expect(res.json().detail).toMatch(/JSON/);
    expect(await patternCount()).toBe(0);
  });

  it('wrong content type → 422 naming JSON', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await t.server.inject({ method: 'POST', url: '/v1/learn', headers: { 'content-type': type }, payload: 'task=x&code=y&eval_score=5' });
      expect422(res, 'content-type');
      expect(res.json().detail).toMatch(/application\/json/);
    }
    expect(await patternCount()).toBe(0);
  });

  it('a missing body → 422', async () => {
    expect422(await t.call('POST', '/v1/learn'), 'body');
  });

  it('a body over SERVICE_MAX_BODY_SIZE → 413 naming the byte limit', async () => {
    const res = await t.call('POST', '/v1/learn', learnBody('big', { code: 'y'.repeat(5000) }));
    expect(res.statusCode).toBe(413);
    expect(res.json().detail).toContain('4096 bytes');
    expect(res.json().request_id).toBe(res.headers['x-request-id']);
    expect(await patternCount()).toBe(0);
  });

  it('pattern keys with .. or a foreign prefix are rejected before storage', async () => {
    const keys = ['patterns/../../etc/passwd', '../patterns/abc', 'feedback/abc', 'patterns/A B', 'patterns/', 'patterns/a.b', `patterns/${'a'.repeat(65)}`];
    for (const key of keys) {
      expect422(await t.call('DELETE', `/v1/patterns/${encodeURIComponent(key)}`));
      expect422(await t.call('POST', '/v1/skills/register', { pattern_key: key, skills: ['x'] }), 'pattern_key');
    }
    const imported = await t.call('POST', '/v1/import', { records: [{ key: 'patterns/../x', task: 't', code: 'c', eval_score: 5 }] });
    expect422(imported);
    expect(await patternCount()).toBe(0);
  });

  it('rejects a bad X-Project-Id with 422', async () => {
    for (const project of ['../other', 'a'.repeat(65), 'has space', 'semi;colon']) {
      const res = await t.call('GET', '/v1/metrics', undefined, { 'x-project-id': project });
      expect422(res, 'X-Project-Id');
    }
  });

  it('aging accepts no body or {}, and rejects fields', async () => {
    expect((await t.call('POST', '/v1/aging')).statusCode).toBe(200);
    expect((await t.call('POST', '/v1/aging', {})).statusCode).toBe(200);
    const empty = await t.server.inject({ method: 'POST', url: '/v1/aging', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(200);
    expect422(await t.call('POST', '/v1/aging', { weeks: 3 }));
  });
});

describe('bounds that need the default body size', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a 10,001-char task → 422 (10,000 is accepted)', async () => {
    const tooLong = await t.call('POST', '/v1/learn', learnBody('x'.repeat(10_001)));
    expect(tooLong.statusCode).toBe(422);
    expect(tooLong.json().errors[0].path).toBe('task');
    expect((await t.call('GET', '/v1/health')).json().pattern_count).toBe(0);
    const atLimit = await t.call('POST', '/v1/learn', learnBody(`word ${'y'.repeat(9_995)}`));
    expect(atLimit.statusCode).toBe(200);
  });

  it('more than 10,000 import records → 422, nothing stored', async () => {
    const records = Array.from({ length: 10_001 }, () => ({ task: 't', code: 'c', eval_score: 5 }));
    const res = await t.call('POST', '/v1/import', { records });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('records');
    expect((await t.call('GET', '/v1/health')).json().pattern_count).toBe(1);
  });
});
