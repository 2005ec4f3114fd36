import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { learnBody, startServer, type TestServer } from './helpers.js';

const KEY_A = 'svc_test_key_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const KEY_B = 'svc_test_key_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('env auth mode', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: `${KEY_A},${KEY_B}` });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses missing, wrong and non-Bearer credentials with 401 {detail, request_id}', async () => {
    const cases: Record<string, string>[] = [{}, bearer('svc_wrong'), { authorization: `Basic ${KEY_A}` }, bearer(`${KEY_A}x`)];
    for (const headers of cases) {
      const res = await t.call('POST', '/v1/recall', { task: 'x' }, headers);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ code: 'unauthenticated', detail: expect.any(String), request_id: res.headers['x-request-id'] });
    }
    const events = await t.app.deps.storage.audit.list({ kind: 'AUTH_FAILED', limit: 10 });
    expect(events).toHaveLength(4);
    expect(JSON.stringify(events)).not.toContain(KEY_A);
  });

  it('accepts every configured key, as owner by default', async () => {
    for (const key of [KEY_A, KEY_B]) {
      expect((await t.call('POST', '/v1/learn', learnBody(`task for ${key.slice(-3)}`), bearer(key))).statusCode).toBe(200);
    }
    const exported = await t.call('GET', '/v1/export', undefined, bearer(KEY_A));
    expect(exported.statusCode).toBe(200);
    expect(exported.json().count).toBe(2);
  });

  it('serves /v1/version without a key', async () => {
    const res = await t.call('GET', '/v1/version');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      app_version: expect.stringMatching(/^\d+\.\d+\.\d+/), api_version: 'v1', git_commit: expect.any(String), build_time: expect.any(String),
    });
  });

  it('keeps projects apart with X-Project-Id', async () => {
    const task = 'Generate monthly invoices for every active customer account';
    const a = { ...bearer(KEY_A), 'x-project-id': 'alpha' };
    const b = { ...bearer(KEY_A), 'x-project-id': 'beta_2' };
    const key = (await t.call('POST', '/v1/learn', learnBody(task), a)).json().pattern_key;

    expect((await t.call('POST', '/v1/recall', { task }, a)).json().matches).toHaveLength(1);
    expect((await t.call('POST', '/v1/recall', { task }, b)).json().matches).toHaveLength(0);
    expect((await t.call('GET', '/v1/metrics', undefined, b)).json()).toMatchObject({ runs: 0, pattern_count: 0 });
    expect((await t.call('GET', '/v1/health', undefined, a)).json().pattern_count).toBe(1);
    expect((await t.call('GET', '/v1/export', undefined, b)).json().count).toBe(0);
    expect((await t.call('DELETE', `/v1/patterns/${encodeURIComponent(key)}`, undefined, b)).statusCode).toBe(404);
    expect((await t.call('POST', '/v1/skills/register', { pattern_key: key, skills: ['x'] }, b)).statusCode).toBe(404);
    // The default project did not see it either.
    expect((await t.call('POST', '/v1/recall', { task }, bearer(KEY_A))).json().matches.map((m: { pattern_key: string }) => m.pattern_key)).not.toContain(key);
    expect((await t.call('DELETE', `/v1/patterns/${encodeURIComponent(key)}`, undefined, a)).statusCode).toBe(200);
  });
});

describe('SERVICE_ENV_AUTH_ROLE', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    while (servers.length) await servers.pop()?.close();
  });

  it('reader: may recall and read, may not learn (403 naming `learn`)', async () => {
    const t = await startServer({ SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: KEY_A, SERVICE_ENV_AUTH_ROLE: 'reader' });
    servers.push(t);
    const learn = await t.call('POST', '/v1/learn', learnBody('anything'), bearer(KEY_A));
    expect(learn.statusCode).toBe(403);
    expect(learn.json().detail).toContain('"learn"');
    expect(learn.json().request_id).toBe(learn.headers['x-request-id']);
    expect((await t.call('GET', '/v1/health', undefined, bearer(KEY_A))).json().pattern_count).toBe(0);

    for (const [method, url, permission] of [
      ['POST', '/v1/aging', 'aging'], ['POST', '/v1/import', 'import'], ['GET', '/v1/export', 'export'],
      ['DELETE', '/v1/patterns/patterns%2Fabc', 'patterns:delete'], ['POST', '/v1/skills/register', 'skills:register'],
    ] as const) {
      const res = await t.call(method, url, method === 'POST' ? {} : undefined, bearer(KEY_A));
      expect(res.statusCode, url).toBe(403);
      expect(res.json().detail).toContain(`"${permission}"`);
    }
    for (const [method, url, body] of [
      ['POST', '/v1/recall', { task: 'x' }], ['GET', '/v1/recall?task=x', undefined], ['GET', '/v1/metrics', undefined],
      ['GET', '/v1/health', undefined], ['GET', '/v1/health/deep', undefined], ['POST', '/v1/skills/search', { skills: ['x'] }],
    ] as const) {
      expect((await t.call(method, url, body, bearer(KEY_A))).statusCode, url).toBe(200);
    }
  });

  it('editor: may learn, may not delete patterns or export', async () => {
    const t = await startServer({ SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: KEY_A, SERVICE_ENV_AUTH_ROLE: 'editor' });
    servers.push(t);
    const key = (await t.call('POST', '/v1/learn', learnBody('Deploy the app'), bearer(KEY_A))).json().pattern_key;
    expect((await t.call('DELETE', `/v1/patterns/${encodeURIComponent(key)}`, undefined, bearer(KEY_A))).json().detail).toContain('"patterns:delete"');
    expect((await t.call('GET', '/v1/export', undefined, bearer(KEY_A))).statusCode).toBe(403);
    expect((await t.call('POST', '/v1/aging', undefined, bearer(KEY_A))).statusCode).toBe(200);
  });

  it('admin: may delete patterns and export', async () => {
    const t = await startServer({ SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: KEY_A, SERVICE_ENV_AUTH_ROLE: 'admin' });
    servers.push(t);
    const key = (await t.call('POST', '/v1/learn', learnBody('Deploy the app'), bearer(KEY_A))).json().pattern_key;
    expect((await t.call('DELETE', `/v1/patterns/${encodeURIComponent(key)}`, undefined, bearer(KEY_A))).statusCode).toBe(200);
    expect((await t.call('GET', '/v1/export', undefined, bearer(KEY_A))).statusCode).toBe(200);
  });
});

describe('dev mode and auto without keys', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    while (servers.length) await servers.pop()?.close();
  });

  for (const env of [{ SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true' }, { SERVICE_AUTH_MODE: 'auto', SERVICE_ALLOW_NO_AUTH: '' }]) {
    it(`${env.SERVICE_AUTH_MODE}: runs unauthenticated as owner and warns at startup`, async () => {
      const lines: string[] = [];
      const logger = createLogger({ level: 'info', json: true, destination: { write: (l: string) => lines.push(l) } });
      const t = await startServer(env, { logger });
      servers.push(t);
      expect((await t.call('POST', '/v1/learn', learnBody('Deploy the app'))).statusCode).toBe(200);
      expect((await t.call('GET', '/v1/export')).statusCode).toBe(200);
      const warnings = lines.map((l) => JSON.parse(l)).filter((e) => e.level === 'warn');
      expect(warnings.some((w) => /NO AUTHENTICATION/.test(w.msg))).toBe(true);
    });
  }

  it('auto with keys uses them', async () => {
    const t = await startServer({ SERVICE_AUTH_MODE: 'auto', SERVICE_API_KEYS: KEY_A });
    servers.push(t);
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(401);
    expect((await t.call('GET', '/v1/metrics', undefined, bearer(KEY_A))).statusCode).toBe(200);
  });
});
