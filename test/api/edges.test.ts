import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { ManualClock, learnBody, patchedJsonStorage, serversClosedAfterEach } from './helpers.js';

const start = serversClosedAfterEach();

describe('request ids and unknown routes', () => {
  it('echoes a safe X-Request-Id, mints one otherwise, and 404s unknown routes with it', async () => {
    const t = await start();
    const given = await t.call('GET', '/v1/nope', undefined, { 'x-request-id': 'trace-123' });
    expect(given.statusCode).toBe(404);
    expect(given.headers['x-request-id']).toBe('trace-123');
    expect(given.json()).toEqual({ code: 'not_found', detail: expect.stringContaining('/v1/nope'), request_id: 'trace-123' });

    const unsafe = await t.call('GET', '/v1/health', undefined, { 'x-request-id': 'bad id\nwith newline' });
    expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect((await t.call('POST', '/v2/learn', learnBody('x'))).statusCode).toBe(404);
  });
});

describe('maintenance mode', () => {
  it('answers 503 everywhere except the two health endpoints and the probes', async () => {
    const t = await start({ SERVICE_MAINTENANCE: 'true' });
    const learn = await t.call('POST', '/v1/learn', learnBody('x'));
    expect(learn.statusCode).toBe(503);
    expect(learn.json()).toEqual({ code: 'maintenance', detail: expect.stringContaining('maintenance'), request_id: learn.headers['x-request-id'] });
    expect((await t.call('GET', '/v1/recall?task=x')).statusCode).toBe(503);
    expect((await t.call('GET', '/v1/version')).statusCode).toBe(503);
    expect((await t.call('GET', '/v1/health')).statusCode).toBe(200);
    expect((await t.call('GET', '/v1/health/deep')).statusCode).toBe(200);
    expect((await t.call('GET', '/livez')).statusCode).toBe(200);
    expect((await t.call('GET', '/readyz')).statusCode).toBe(200);
  });
});

describe('rate limits', () => {
  it('per IP: the request past SERVICE_RATE_LIMIT_DEFAULT in a minute gets 429 + Retry-After: 60; health and version are exempt', async () => {
    const t = await start({ SERVICE_RATE_LIMIT_DEFAULT: '3' });
    for (let i = 0; i < 3; i++) expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(200);
    const limited = await t.call('POST', '/v1/recall', { task: 'x' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.json()).toEqual({ code: 'rate_limited', detail: expect.any(String), request_id: limited.headers['x-request-id'] });
    for (let i = 0; i < 5; i++) {
      expect((await t.call('GET', '/v1/health')).statusCode).toBe(200);
      expect((await t.call('GET', '/v1/version')).statusCode).toBe(200);
    }
    // One audit event per client and window, not one per refusal.
    expect((await t.call('GET', '/v1/metrics')).statusCode).toBe(429);
    expect(await t.app.deps.storage.audit.list({ kind: 'RATE_LIMITED', limit: 10 })).toHaveLength(1);
  });

  it('trusts no proxy by default: a rotated X-Forwarded-For does not escape the per-IP limit', async () => {
    const plain = await start({ SERVICE_RATE_LIMIT_DEFAULT: '2' });
    const rotating = (i: number) => plain.server.inject({ method: 'GET', url: '/v1/metrics', remoteAddress: '10.1.2.3', headers: { 'x-forwarded-for': `203.0.113.${i}` } });
    expect((await rotating(1)).statusCode).toBe(200);
    expect((await rotating(2)).statusCode).toBe(200);
    expect((await rotating(3)).statusCode).toBe(429);
  });

  it('honours X-Forwarded-For only from a trusted proxy', async () => {
    const trusted = await start({ SERVICE_RATE_LIMIT_DEFAULT: '2', SERVICE_TRUSTED_PROXIES: 'loopback' });
    const fromClient = (ip: string) => trusted.server.inject({ method: 'GET', url: '/v1/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': ip } });
    expect((await fromClient('203.0.113.1')).statusCode).toBe(200);
    expect((await fromClient('203.0.113.1')).statusCode).toBe(200);
    expect((await fromClient('203.0.113.1')).statusCode).toBe(429);
    expect((await fromClient('203.0.113.2')).statusCode).toBe(200);

    const untrusted = await start({ SERVICE_RATE_LIMIT_DEFAULT: '2', SERVICE_TRUSTED_PROXIES: '10.9.9.9' });
    const spoofed = (ip: string) => untrusted.server.inject({ method: 'GET', url: '/v1/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': ip } });
    expect((await spoofed('203.0.113.1')).statusCode).toBe(200);
    expect((await spoofed('203.0.113.2')).statusCode).toBe(200);
    expect((await spoofed('203.0.113.3')).statusCode).toBe(429);
  });

  it('per key: 120 a minute across all paths, whatever the IP', async () => {
    const key = 'svc_rate_key_cccccccccccccccccccccccccccccccccc';
    const t = await start({ SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: key, SERVICE_RATE_LIMIT_PER_KEY: '3', SERVICE_RATE_LIMIT_DEFAULT: '100' });
    const req = (ip: string, url: string) => t.server.inject({ method: 'GET', url, remoteAddress: ip, headers: { authorization: `Bearer ${key}` } });
    expect((await req('198.51.100.1', '/v1/metrics')).statusCode).toBe(200);
    expect((await req('198.51.100.2', '/v1/recall?task=x')).statusCode).toBe(200);
    expect((await req('198.51.100.3', '/v1/export')).statusCode).toBe(200);
    const limited = await req('198.51.100.4', '/v1/metrics');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('60');
  });
});

describe('CORS', () => {
  const origin = 'https://app.example.com';
  it('is off unless SERVICE_CORS_ORIGINS is set', async () => {
    const t = await start();
    const res = await t.call('GET', '/v1/version', undefined, { origin });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await t.server.inject({ method: 'OPTIONS', url: '/v1/learn', headers: { origin, 'access-control-request-method': 'POST' } });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows only the configured origins, and answers preflights before auth', async () => {
    const t = await start({ SERVICE_CORS_ORIGINS: `${origin},https://other.example.com`, SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: 'svc_cors_key_dddddddddddddddddddddddddddddddd' });
    const preflight = await t.server.inject({
      method: 'OPTIONS', url: '/v1/learn', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(origin);
    const simple = await t.call('GET', '/v1/version', undefined, { origin });
    expect(simple.headers['access-control-allow-origin']).toBe(origin);
    const foreign = await t.call('GET', '/v1/version', undefined, { origin: 'https://evil.example.com' });
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('lets a browser read the rate-limit headers of a limited route', async () => {
    const t = await start({ SERVICE_CORS_ORIGINS: origin });
    const res = await t.call('GET', '/v1/metrics', undefined, { origin });
    expect(res.headers['ratelimit-limit']).toBeDefined();
    const exposed = String(res.headers['access-control-expose-headers']).split(',').map((h) => h.trim().toLowerCase());
    expect(exposed).toEqual(expect.arrayContaining(['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']));
  });
});

describe('internal errors', () => {
  it('a failing storage → 500 {detail: "internal error", request_id}, cause logged, nothing leaked', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'error', json: true, destination: { write: (l: string) => lines.push(l) } });
    const failing = await patchedJsonStorage(() => ({
      recordLearn: async () => { throw new Error('disk on fire at /srv/secret/path'); },
    }));
    const t = await start({}, { storage: failing, logger });
    const res = await t.call('POST', '/v1/learn', learnBody('Anything at all'));
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ code: 'internal_error', detail: 'internal error', request_id: res.headers['x-request-id'] });
    expect(res.body).not.toContain('secret');
    const logged = lines.map((l) => JSON.parse(l)).find((e) => e.msg === 'unhandled error');
    expect(logged.err.message).toContain('disk on fire');
  });
});

describe('/metrics', () => {
  it('is absent unless SERVICE_METRICS=true', async () => {
    const t = await start();
    expect((await t.call('GET', '/metrics')).statusCode).toBe(404);
  });

  it('needs the metrics token when set and exposes every spec metric with route-pattern labels', async () => {
    const t = await start({ SERVICE_METRICS: 'true', SERVICE_METRICS_TOKEN: 'scrape-token-123' });
    const key = (await t.call('POST', '/v1/learn', learnBody('Archive old tickets'))).json().pattern_key;
    await t.call('POST', '/v1/recall', { task: 'Archive old tickets' });
    await t.call('DELETE', `/v1/patterns/${encodeURIComponent(key)}`);
    await t.call('POST', '/v1/learn', learnBody('Rebuild the search index'));

    expect((await t.call('GET', '/metrics')).statusCode).toBe(401);
    expect((await t.call('GET', '/metrics', undefined, { authorization: 'Bearer wrong' })).statusCode).toBe(401);
    const res = await t.call('GET', '/metrics', undefined, { authorization: 'Bearer scrape-token-123' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    for (const name of [
      'service_pattern_count', 'service_avg_eval_score', 'service_total_runs', 'service_success_rate', 'service_reuse_rate',
      'service_requests_total', 'service_recall_hits_total', 'service_recall_misses_total', 'service_jobs_submitted_total',
      'service_jobs_completed_total', 'service_request_duration_seconds', 'service_llm_call_duration_seconds',
      'service_embedding_duration_seconds', 'service_storage_op_duration_seconds',
    ]) {
      expect(res.body).toContain(`# TYPE ${name} `);
    }
    expect(res.body).toMatch(/^service_pattern_count 1$/m);
    expect(res.body).toMatch(/^service_total_runs 2$/m);
    expect(res.body).toMatch(/^service_recall_hits_total 1$/m);
    expect(res.body).toContain('service_requests_total{method="DELETE",path="/v1/patterns/:key",status_code="200"} 1');
    expect(res.body).not.toContain(encodeURIComponent(key));
  });
});

describe('health', () => {
  it('basic health counts the caller scope; deep health reports each check', async () => {
    const t = await start();
    await t.call('POST', '/v1/learn', learnBody('Clean up stale feature flags'));
    expect((await t.call('GET', '/v1/health')).json()).toEqual({ status: 'ok', storage: 'json', pattern_count: 1 });
    const deep = await t.call('GET', '/v1/health/deep');
    expect(deep.statusCode).toBe(200);
    expect(deep.json()).toMatchObject({
      status: 'ok',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      uptime_seconds: expect.any(Number),
      checks: {
        storage: { status: 'ok', latency_ms: expect.any(Number) },
        embedding: { status: 'ok', latency_ms: expect.any(Number) },
        llm: { status: 'not_configured', latency_ms: null },
      },
    });
  });

  it('storage down → 503 status error', async () => {
    const down = await patchedJsonStorage(() => ({ ping: async () => { throw new Error('connection refused 10.0.0.5:5432'); } }));
    const t = await start({}, { storage: down });
    const deep = await t.call('GET', '/v1/health/deep');
    expect(deep.statusCode).toBe(503);
    expect(deep.json().status).toBe('error');
    expect(deep.json().checks.storage.status).toBe('error');
    expect(deep.body).not.toContain('10.0.0.5');
  });

  it('an embedding model that cannot load → basic health degraded, deep health marks embeddings error; both recover', async () => {
    const clock = new ManualClock();
    let broken = true;
    let calls = 0;
    const embedder = {
      info: { provider: 'local' as const, model: 'flaky-model', dimension: 3 },
      embed: async (texts: string[]) => {
        calls++;
        if (broken) throw new Error('model file missing: /models/flaky/model.safetensors');
        return texts.map(() => new Float32Array([1, 0, 0]));
      },
    };
    const t = await start({}, { embedder, clock });
    const basic = await t.call('GET', '/v1/health');
    expect(basic.statusCode).toBe(200);
    expect(basic.json()).toEqual({ status: 'degraded', storage: 'json', pattern_count: 0 });
    const deep = await t.call('GET', '/v1/health/deep');
    expect(deep.statusCode).toBe(200);
    expect(deep.json()).toMatchObject({ status: 'degraded', checks: { embedding: { status: 'error' }, storage: { status: 'ok' } } });
    expect(deep.body).not.toContain('/models/flaky');

    // Probed again only after a while, so a health poller does not hammer a failing model.
    const before = calls;
    expect((await t.call('GET', '/v1/health')).json().status).toBe('degraded');
    expect(calls).toBe(before);
    broken = false;
    clock.advance(31_000);
    expect((await t.call('GET', '/v1/health')).json().status).toBe('ok');
    expect((await t.call('GET', '/v1/health/deep')).json().status).toBe('ok');
  });

  it('LLM down → degraded, probed at most once a minute', async () => {
    const clock = new ManualClock();
    let pings = 0;
    const llm = {
      provider: 'openai' as const, model: 'fake',
      complete: async () => { throw new Error('unused'); },
      ping: async () => { pings++; throw new Error('provider unreachable'); },
    };
    const t = await start({}, { llm, clock });
    const first = (await t.call('GET', '/v1/health/deep')).json();
    expect(first.status).toBe('degraded');
    expect(first.checks.llm.status).toBe('error');
    await t.call('GET', '/v1/health/deep');
    expect(pings).toBe(1);
    clock.advance(61_000);
    await t.call('GET', '/v1/health/deep');
    expect(pings).toBe(2);
  });
});

describe('slow-client timeouts (issue 18, 8)', () => {
  it('the HTTP server carries the request, headers and keep-alive timeouts, defaults and configured', async () => {
    const defaults = await start();
    expect(defaults.server.server.requestTimeout).toBe(120_000);
    expect(defaults.server.server.headersTimeout).toBe(10_000);
    expect(defaults.server.server.keepAliveTimeout).toBe(5_000);
    const tuned = await start({ SERVICE_REQUEST_TIMEOUT_SECONDS: '30', SERVICE_HEADERS_TIMEOUT_SECONDS: '60', SERVICE_KEEP_ALIVE_TIMEOUT_SECONDS: '2' });
    expect(tuned.server.server.requestTimeout).toBe(30_000);
    // Never above the request timeout (Node refuses that).
    expect(tuned.server.server.headersTimeout).toBe(30_000);
    expect(tuned.server.server.keepAliveTimeout).toBe(2_000);
  });
});
