import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, InvalidUrlError, ProtocolError, ServiceClient, TransportError } from '../../src/client/index.js';
import { ApiClient, FetchTransport, UNCHECKED } from '../../src/client/browser.js';

/**
 * The client against a scripted loopback HTTP server: what goes on the wire (headers, paths,
 * bodies) and how every kind of answer becomes a value or an error. The real server is
 * exercised by the other CLI tests.
 */
interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: unknown }
type Reply = (seen: Seen, res: ServerResponse) => void;

let server: Server;
let base: string;
let seen: Seen[] = [];
let reply: Reply = () => undefined;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (c: string) => (raw += c)).on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: raw ? JSON.parse(raw) : undefined };
      seen.push(entry);
      reply(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
});

describe('ServiceClient on the wire', () => {
  it('sends the key, the project and the JSON body, and returns the parsed answer', async () => {
    reply = (_s, res) => json(res, 200, { stored: true, pattern_count: 3, pattern_key: 'patterns/abc123' });
    const client = new ServiceClient({ url: `${base}/`, apiKey: 'k-1', project: 'proj_a' });
    const res = await client.learn({ task: 'sort a list', code: 'sorted(x)', eval_score: 8 });
    await client.close();
    expect(res).toEqual({ stored: true, pattern_count: 3, pattern_key: 'patterns/abc123' });
    expect(seen[0].method).toBe('POST');
    expect(seen[0].url).toBe('/v1/learn');
    expect(seen[0].headers.authorization).toBe('Bearer k-1');
    expect(seen[0].headers['x-project-id']).toBe('proj_a');
    expect(seen[0].headers['content-type']).toBe('application/json');
    expect(seen[0].body).toEqual({ task: 'sort a list', code: 'sorted(x)', eval_score: 8 });
  });

  it('keeps a path prefix, encodes pattern keys and query strings', async () => {
    reply = (s, res) => s.method === 'DELETE'
      ? json(res, 200, { deleted: true, pattern_key: 'patterns/abc' })
      : json(res, 200, { recall_id: '0000000000000000ab', matches: [], has_more: false, next_offset: null });
    const client = new ServiceClient({ url: `${base}/memory` });
    await client.deletePattern('patterns/abc');
    await client.recallGet({ task: 'a b&c', limit: 3, deduplicate: false, source: undefined });
    await client.close();
    expect(seen[0].url).toBe('/memory/v1/patterns/patterns%2Fabc');
    expect(seen[0].headers.authorization).toBeUndefined();
    expect(seen[1].url).toBe('/memory/v1/recall?task=a+b%26c&limit=3&deduplicate=false');
  });

  it('sends a skills search by `required`, the contract\'s other name for the tag list', async () => {
    reply = (_s, res) => json(res, 200, { matches: [], count: 0 });
    const client = new ServiceClient({ url: base });
    await client.skillsSearch({ required: ['csv', 'parsing'], match_all: true });
    await client.close();
    expect(seen[0].url).toBe('/v1/skills/search');
    expect(seen[0].body).toEqual({ required: ['csv', 'parsing'], match_all: true });
  });

  it('calls the same table over fetch (the console\'s transport): headers read per request, errors as ApiError', async () => {
    let key = 'k-1';
    const client = new ApiClient(new FetchTransport({ url: base, headers: () => ({ authorization: `Bearer ${key}` }) }), UNCHECKED);
    reply = (_s, res) => json(res, 200, { job_id: 'j/1', operation: 'aging', status: 'pending', created_at: 'x', started_at: null, completed_at: null, attempts: 0, result: null, error: null });
    await client.jobs.cancel('j/1');
    key = 'k-2';
    reply = (_s, res) => json(res, 404, { code: 'not_found', detail: 'no such job', request_id: 'r-9' });
    const error = await client.jobs.get('j/2').catch((e: unknown) => e);
    expect(seen.map((s) => `${s.method} ${s.url} ${s.headers.authorization}`)).toEqual(['POST /v1/jobs/j%2F1/cancel Bearer k-1', 'GET /v1/jobs/j%2F2 Bearer k-2']);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, code: 'not_found', detail: 'no such job', requestId: 'r-9' });
  });

  it('streams the listing\'s NDJSON export over fetch in one request, its filters in the query; a refusal is ApiError', async () => {
    const client = new ApiClient(new FetchTransport({ url: base, headers: () => ({ authorization: 'Bearer k-1' }) }), UNCHECKED);
    const lines = ['{"key":"patterns/a"}', '{"key":"patterns/b"}'];
    reply = (_s, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${lines[0]}\n`);
      res.end(`${lines[1]}\n`);
    };
    expect(await client.exportPatterns({ classification: 'internal' })).toBe(`${lines.join('\n')}\n`);
    reply = (_s, res) => json(res, 403, { code: 'forbidden', detail: 'no', request_id: 'r-1' });
    const error = await client.exportPatterns().catch((e: unknown) => e);
    expect(seen.map((s) => `${s.method} ${s.url} ${s.headers.accept} ${s.headers.authorization}`)).toEqual([
      'GET /v1/patterns/export?classification=internal application/x-ndjson Bearer k-1',
      'GET /v1/patterns/export application/x-ndjson Bearer k-1',
    ]);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 403, requestId: 'r-1' });
  });

  it('turns an error answer into ApiError with status, detail, body and request id', async () => {
    const body = { detail: 'invalid body: eval_score: too big', errors: [{ path: 'eval_score', message: 'too big' }], request_id: 'r-42' };
    reply = (_s, res) => json(res, 422, body);
    const client = new ServiceClient({ url: base });
    const err = await client.learn({ task: 't', code: 'c', eval_score: 11 }).catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(ApiError);
    const api = err as ApiError;
    expect([api.status, api.detail, api.requestId]).toEqual([422, 'invalid body: eval_score: too big', 'r-42']);
    expect(api.body).toEqual(body);
    expect(api.fieldErrors).toEqual([{ path: 'eval_score', message: 'too big' }]);
  });

  it('describes the quota body and reads Retry-After and X-Request-Id', async () => {
    reply = (_s, res) => json(res, 429, { error: 'quota_exceeded', metric: 'patterns', current: 5000, limit: 5000, reset_date: '2030-02-01' },
      { 'retry-after': '60', 'x-request-id': 'hdr-1' });
    const client = new ServiceClient({ url: base });
    const err = (await client.learn({ task: 't', code: 'c', eval_score: 5 }).catch((e: unknown) => e)) as ApiError;
    await client.close();
    expect(err.detail).toBe('patterns quota exceeded (5000/5000), resets 2030-02-01');
    expect(err.retryAfterSeconds).toBe(60);
    expect(err.requestId).toBe('hdr-1');
  });

  it('rejects an answer that breaks the contract with ProtocolError', async () => {
    reply = (_s, res) => json(res, 200, { stored: 'yes' });
    const client = new ServiceClient({ url: base });
    const err = await client.learn({ task: 't', code: 'c', eval_score: 5 }).catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as Error).message).toContain('stored');
  });

  it('returns the deep health report carried by a 503, but throws on a 503 without one', async () => {
    const report = { status: 'error', version: '0.1.0', uptime_seconds: 3, checks: {
      storage: { status: 'error', latency_ms: null }, llm: { status: 'not_configured', latency_ms: null }, embedding: { status: 'ok', latency_ms: 1 },
    } };
    reply = (_s, res) => json(res, 503, report);
    const client = new ServiceClient({ url: base });
    expect(await client.healthDeep()).toEqual(report);
    reply = (_s, res) => json(res, 503, { detail: 'maintenance' });
    const err = await client.healthDeep().catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).detail).toBe('maintenance');
  });

  it('imports in chunks and splits a chunk the server finds too large', async () => {
    reply = (s, res) => {
      const { records } = s.body as { records: unknown[] };
      if (records.length > 4) return json(res, 413, { detail: 'body exceeds 1024 bytes' });
      json(res, 200, { imported: records.length - 1, skipped: 1, total: records.length });
    };
    const records = Array.from({ length: 25 }, (_, i) => ({ task: `task ${i}`, code: 'x', eval_score: 5 }));
    const progress: number[] = [];
    const client = new ServiceClient({ url: base });
    const totals = await client.importAll(records, { chunkSize: 10, overwrite: true, onProgress: (sent) => progress.push(sent) });
    await client.close();

    const accepted = seen.filter((s) => (s.body as { records: unknown[] }).records.length <= 4);
    const sentTasks = accepted.flatMap((s) => (s.body as { records: { task: string }[] }).records.map((r) => r.task));
    expect(sentTasks).toEqual(records.map((r) => r.task));
    expect(seen.every((s) => (s.body as { overwrite: boolean }).overwrite === true)).toBe(true);
    expect(totals).toEqual({ imported: 25 - accepted.length, skipped: accepted.length, total: 25 });
    expect(progress.at(-1)).toBe(25);
  });

  it('reports an unreachable service with TransportError naming the URL', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const client = new ServiceClient({ url: `http://127.0.0.1:${port}` });
    const err = await client.health().catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('ECONNREFUSED');
    // The library speaks of no CLI flag: --url is the CLI's hint to add.
    expect((err as Error).message).toBe(`cannot reach the service at http://127.0.0.1:${port}/v1/health: connection refused`);
  });

  it('refuses a base URL that is not http(s)', () => {
    expect(() => new ServiceClient({ url: 'ftp://x' })).toThrow(InvalidUrlError);
    expect(() => new ServiceClient({ url: 'localhost:8000' })).toThrow(InvalidUrlError);
  });
});
