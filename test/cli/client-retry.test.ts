import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, ProtocolError, ServiceClient, type RetryWait } from '../../src/client/index.js';

/**
 * The client's waits on 429/503, against a scripted loopback server. The waits go through the
 * policy's `wait` hook, recorded instead of slept, so nothing here depends on real time.
 */
let server: Server;
let base: string;
let answers: ((res: ServerResponse) => void)[] = [];
let requests = 0;

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (res: ServerResponse) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const LEARNED = json(200, { stored: true, pattern_count: 1 });

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume().on('end', () => {
      requests++;
      (answers.shift() ?? json(500, { detail: 'script ran out' }))(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  answers = [];
  requests = 0;
});

function clientWith(maxWaitMs: number | null, waits: RetryWait[]) {
  return new ServiceClient({
    url: base,
    retry: maxWaitMs === null ? undefined : { maxWaitMs, wait: async (w) => { waits.push(w); } },
  });
}

const learn = (client: ServiceClient) => client.learn({ task: 't', code: 'c', eval_score: 5 });

describe('waiting on "retry later" answers', () => {
  it('a 429 with RateLimit-Reset is waited out (the precise reset wins over Retry-After) and retried', async () => {
    answers = [json(429, { detail: 'rate limit exceeded' }, { 'retry-after': '60', 'ratelimit-reset': '3' }), LEARNED];
    const waits: RetryWait[] = [];
    const client = clientWith(120_000, waits);
    expect(await learn(client)).toEqual({ stored: true, pattern_count: 1 });
    await client.close();
    expect(requests).toBe(2);
    expect(waits).toEqual([{ status: 429, seconds: 3, attempt: 1, method: 'POST', path: '/v1/learn' }]);
  });

  it('a 503 with Retry-After is retried as often as the budget allows', async () => {
    answers = [json(503, { detail: 'maintenance' }, { 'retry-after': '2' }), json(503, { detail: 'maintenance' }, { 'retry-after': '2' }), LEARNED];
    const waits: RetryWait[] = [];
    const client = clientWith(10_000, waits);
    await learn(client);
    await client.close();
    expect(waits.map((w) => [w.seconds, w.attempt])).toEqual([[2, 1], [2, 2]]);
  });

  it('a write answered 503 storage_unavailable is not resent (it may have reached the database); a read is', async () => {
    const unavailable = json(503, { code: 'storage_unavailable', detail: 'storage unavailable: connection lost' }, { 'retry-after': '1' });
    answers = [unavailable, LEARNED];
    const waits: RetryWait[] = [];
    const client = clientWith(10_000, waits);
    const err = await learn(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(503);
    expect(requests).toBe(1);
    answers = [unavailable, json(200, { version: '1.0.0' })];
    requests = 0;
    await client.version().catch(() => undefined);
    await client.close();
    expect(requests).toBe(2);
    expect(waits).toEqual([expect.objectContaining({ status: 503, seconds: 1, method: 'GET' })]);
  });

  it('gives up with the 429 once the next wait would pass the total budget', async () => {
    answers = [
      json(429, { detail: 'rate limit exceeded' }, { 'retry-after': '60', 'ratelimit-reset': '4' }),
      json(429, { detail: 'rate limit exceeded' }, { 'retry-after': '60', 'ratelimit-reset': '4' }),
    ];
    const waits: RetryWait[] = [];
    const client = clientWith(5_000, waits);
    const err = await learn(client).catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(429);
    expect(waits).toHaveLength(1);
    expect(requests).toBe(2);
  });

  it('never waits on a quota 429 (no wait hint), nor without a retry policy', async () => {
    answers = [json(429, { error: 'quota_exceeded', metric: 'patterns', current: 1, limit: 1, reset_date: '2030-01-01' })];
    const waits: RetryWait[] = [];
    const withPolicy = clientWith(120_000, waits);
    expect(((await learn(withPolicy).catch((e: unknown) => e)) as ApiError).status).toBe(429);
    await withPolicy.close();
    answers = [json(429, { detail: 'rate limit exceeded' }, { 'retry-after': '1' })];
    const without = clientWith(null, waits);
    expect(((await learn(without).catch((e: unknown) => e)) as ApiError).status).toBe(429);
    await without.close();
    expect(waits).toEqual([]);
    expect(requests).toBe(2);
  });
});

describe("responseCheck: 'shape'", () => {
  it('checks only the declared top-level fields of recall, and still refuses a foreign answer', async () => {
    const client = new ServiceClient({ url: base, responseCheck: 'shape' });
    answers = [json(200, { matches: [], has_more: false, next_offset: null })];
    expect(await client.recall({ task: 'x' })).toEqual({ matches: [], has_more: false, next_offset: null });
    answers = [json(200, { hello: 'this is another service' })];
    const err = await client.recall({ task: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as Error).message).toContain('matches');
    await client.close();
  });
});
