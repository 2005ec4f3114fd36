/**
 * Issue 25 row 10: the reference system's client sends pattern keys unencoded in the path
 * (`DELETE /v1/patterns/patterns/<id>`, `PUT /v1/governance/patterns/patterns/<id>/classify`);
 * they work as the encoded form does (GET too, for symmetry). `..` and other prefixes stay
 * refused. Requests go over HTTP with node:http, which sends the path as written (a WHATWG URL,
 * as fetch and inject use, would resolve the dot segments before they reached the server).
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers.js';

const REFERENCE_KEY = 'patterns/3f2a9c1b_1731000000000_aB3-xY';

let t: TestServer;
let port: number;
let nativeKey: string;

beforeAll(async () => {
  t = await startServer();
  const imported = await t.call('POST', '/v1/import', { records: [{ key: REFERENCE_KEY, task: 'render an invoice as a PDF', code: 'render()', eval_score: 7 }] });
  expect(imported.json()).toMatchObject({ imported: 1 });
  nativeKey = (await t.call('POST', '/v1/learn', { task: 'parse a CSV file into JSON rows', code: 'parse()', eval_score: 6 })).json().pattern_key;
  await t.server.listen({ host: '127.0.0.1', port: 0 });
  port = (t.server.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await t?.close();
});

interface Answer { statusCode: number; body: string; json(): ReturnType<typeof JSON.parse> }

/** One request with `path` sent exactly as written. */
function raw(method: 'GET' | 'DELETE' | 'PUT', path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request({ host: '127.0.0.1', port, method, path, headers: payload ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (s: string) => (text += s));
      res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, body: text, json: () => JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('unencoded pattern keys in the path (the reference client)', () => {
  it('GET, classify and DELETE take patterns/<id> unencoded, for reference and native keys alike', async () => {
    for (const key of [REFERENCE_KEY, nativeKey]) {
      const got = await raw('GET', `/v1/${key.replace('patterns/', 'patterns/patterns/')}`);
      expect(got.statusCode, got.body).toBe(200);
      expect(got.json()).toMatchObject({ key });

      const classified = await raw('PUT', `/v1/governance/${key.replace('patterns/', 'patterns/patterns/')}/classify`, { classification: 'public' });
      expect(classified.statusCode, classified.body).toBe(200);
      expect(classified.json()).toMatchObject({ key, classification: 'public' });

      const deleted = await raw('DELETE', `/v1/patterns/${key}`);
      expect(deleted.statusCode, deleted.body).toBe(200);
      expect(deleted.json()).toEqual({ deleted: true, pattern_key: key });
      expect((await raw('GET', `/v1/patterns/${encodeURIComponent(key)}`)).statusCode).toBe(404);
      expect((await raw('DELETE', `/v1/patterns/${key}`)).statusCode).toBe(404);
    }
  });

  it('the encoded form works as before; a query string and a trailing slash are kept', async () => {
    const key = (await t.call('POST', '/v1/learn', { task: 'send a weekly build report by email', code: 'send()', eval_score: 6 })).json().pattern_key;
    expect((await raw('GET', `/v1/patterns/${encodeURIComponent(key)}`)).statusCode).toBe(200);
    expect((await raw('GET', `/v1/patterns/${key}/`)).statusCode).toBe(200);
    expect((await raw('GET', `/v1/patterns/${key}?x=1`)).statusCode).toBe(200);
  });

  it('`..`, other prefixes and extra segments stay refused', async () => {
    for (const url of ['/v1/patterns/patterns/..', '/v1/patterns/patterns/%2E%2E', '/v1/patterns/patterns/.']) {
      const res = await raw('DELETE', url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json().errors[0].path).toBe('key');
    }
    for (const url of ['/v1/patterns/keys/abc', '/v1/patterns/patterns/abc/def', '/v1/patterns/patterns/../keys', '/v1/governance/patterns/other/abc/classify']) {
      expect((await raw('DELETE', url)).statusCode, url).toBe(404);
    }
    expect((await raw('PUT', '/v1/governance/patterns/patterns/../classify', { classification: 'public' })).statusCode).toBe(422);
    expect((await raw('PUT', '/v1/governance/patterns/patterns/a/b/classify', { classification: 'public' })).statusCode).toBe(404);
  });
});
