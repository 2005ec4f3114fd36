import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createLlm } from '../../src/adapters/llm/index.js';
import { parseRetryAfter } from '../../src/adapters/llm/provider.js';
import { backoffDelay, DEFAULT_RETRY_POLICY } from '../../src/adapters/llm/resilient.js';
import { loadConfig } from '../../src/config/index.js';
import { UnavailableError } from '../../src/core/errors.js';
import { noopInstruments, silentLogger, type Instruments } from '../../src/ports/observability.js';
import { reply, startFakeLlm } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { llmEnv, llmFor, makeLlm, PROVIDERS } from './helpers.js';

const fake = await useFakeLlm();

describe.each(PROVIDERS)('LLM adapter through the real SDK (%s)', (provider) => {
  it('sends system, prompt, temperature and model, and returns text and usage', async () => {
    fake.script((call) => reply.text(`echo:${call.prompt}`));
    const llm = llmFor(fake, provider, { SERVICE_LLM_MODEL: 'model-x' });
    const out = await llm.complete({ system: 'be terse', prompt: 'hello', temperature: 0.7, json: true });
    expect(out.text).toBe('echo:hello');
    expect(out.usage.input_tokens).toBeGreaterThan(0);
    expect(out.usage.output_tokens).toBeGreaterThan(0);
    const [req] = fake.chatRequests();
    expect(req.call).toMatchObject({ api: provider === 'provider_a' ? 'openai' : 'anthropic', model: 'model-x', system: 'be terse', prompt: 'hello', temperature: 0.7 });
    // JSON mode exists only on the OpenAI API.
    expect(req.call?.json).toBe(provider === 'provider_a');
    expect(llm.provider).toBe(provider === 'provider_a' ? 'openai' : 'anthropic');
  });

  it('records the call in the llm duration histogram', async () => {
    const calls: [string, string, number][] = [];
    const instruments: Instruments = { ...noopInstruments, llmCall: (p, m, s) => calls.push([p, m, s]) };
    fake.script(() => reply.text('ok'));
    const llm = makeLlm(loadConfig(llmEnv(fake, provider, { SERVICE_LLM_MODEL: 'm1' })), instruments);
    await llm.complete({ system: 's', prompt: 'p' });
    expect(calls).toHaveLength(1);
    expect(calls[0][0]).toBe(llm.provider);
    expect(calls[0][1]).toBe('m1');
    expect(calls[0][2]).toBeGreaterThanOrEqual(0);
  });

  it('waits at least Retry-After (seconds) before retrying a 429', async () => {
    fake.enqueue(reply.error(429, { retryAfter: 1 }));
    fake.script(() => reply.text('after the wait'));
    const out = await llmFor(fake, provider).complete({ system: 's', prompt: 'p' });
    expect(out.text).toBe('after the wait');
    const [first, second] = fake.chatRequests();
    expect(first.status).toBe(429);
    // Measured on the fake server's clock: the gap between the 429 leaving and the retry arriving.
    expect(second.receivedAt - first.respondedAt!).toBeGreaterThanOrEqual(1000);
  });

  it('retries 5xx and connection drops with backoff, then succeeds', async () => {
    fake.enqueue(reply.error(500), reply.drop(), reply.error(503));
    fake.script(() => reply.text('fourth time lucky'));
    const out = await llmFor(fake, provider).complete({ system: 's', prompt: 'p' });
    expect(out.text).toBe('fourth time lucky');
    expect(fake.chatRequests()).toHaveLength(4);
  });

  it('gives up after 3 retries with UnavailableError (4 attempts in all)', async () => {
    fake.script(() => reply.error(500));
    await expect(llmFor(fake, provider).complete({ system: 's', prompt: 'p' })).rejects.toBeInstanceOf(UnavailableError);
    expect(fake.chatRequests()).toHaveLength(4);
  });

  it.each([400, 401, 403, 404, 422])('does not retry HTTP %i', async (status) => {
    fake.script(() => reply.error(status));
    await expect(llmFor(fake, provider).complete({ system: 's', prompt: 'p' })).rejects.toThrow(/rejected the request/);
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it.each([408, 409])('retries HTTP %i', async (status) => {
    fake.enqueue(reply.error(status));
    fake.script(() => reply.text('ok'));
    await llmFor(fake, provider).complete({ system: 's', prompt: 'p' });
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it('aborts each attempt at SERVICE_LLM_TIMEOUT and retries it', async () => {
    fake.enqueue(reply.hang(), reply.text('late', { delayMs: 5_000 }));
    fake.script(() => reply.text('in time'));
    const out = await llmFor(fake, provider, { SERVICE_LLM_TIMEOUT: '0.2' }).complete({ system: 's', prompt: 'p' });
    expect(out.text).toBe('in time');
    const chats = fake.chatRequests();
    expect(chats).toHaveLength(3);
    expect(chats[0].status).toBeNull();
    expect(chats[1].status).toBeNull();
  });

  it('never has more calls in flight than SERVICE_LLM_CONCURRENCY', async () => {
    fake.script(() => reply.text('slow', { delayMs: 40 }));
    const llm = llmFor(fake, provider, { SERVICE_LLM_CONCURRENCY: '3' });
    await Promise.all(Array.from({ length: 12 }, (_, i) => llm.complete({ system: 's', prompt: `p${i}` })));
    expect(fake.chatRequests()).toHaveLength(12);
    expect(fake.maxInFlight).toBe(3);
  });

  it('pings with a cheap authenticated call', async () => {
    await llmFor(fake, provider).ping();
    const [req] = fake.requests;
    expect(req.route).toBe('models');
    expect(req.headers.authorization ?? req.headers['x-api-key']).toMatch(/test-key/);
  });
});

describe('createLlm', () => {
  it('returns null for provider none and for a missing key', () => {
    const opts = { instruments: noopInstruments, logger: silentLogger };
    expect(createLlm(loadConfig({ SERVICE_LLM_PROVIDER: 'none' }), opts)).toBeNull();
    expect(createLlm(loadConfig({ SERVICE_LLM_PROVIDER: 'provider_b', LLM_PROVIDER_A_API_KEY: 'only-a' }), opts)).toBeNull();
  });

  it('fails a ping against an unreachable provider with UnavailableError', async () => {
    const closed = await startFakeLlm();
    const url = closed.openaiBaseUrl;
    await closed.close();
    const llm = makeLlm(loadConfig({ SERVICE_LLM_PROVIDER: 'openai', LLM_PROVIDER_A_API_KEY: 'k', SERVICE_LLM_BASE_URL: url }));
    await expect(llm.ping()).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe('retry policy details', () => {
  it('parses Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:07 GMT', now)).toBe(7000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });

  it('backs off exponentially with jitter in the upper half, never below Retry-After', () => {
    const p = DEFAULT_RETRY_POLICY;
    expect(backoffDelay(0, p, () => 0, null)).toBe(p.baseDelayMs / 2);
    expect(backoffDelay(0, p, () => 1, null)).toBe(p.baseDelayMs);
    expect(backoffDelay(2, p, () => 1, null)).toBe(p.baseDelayMs * 4);
    expect(backoffDelay(20, p, () => 1, null)).toBe(p.maxDelayMs);
    expect(backoffDelay(0, p, () => 0, 3000)).toBe(3000);
  });
});

describe('fake provider embeddings', () => {
  it('serves deterministic unit vectors of the model dimension, base64 or float', async () => {
    const client = new OpenAI({ apiKey: 'k', baseURL: fake.openaiBaseUrl, maxRetries: 0 });
    const small = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['sort a list', 'sort a list', 'parse json'] });
    const [a, b, c] = small.data.map((d) => d.embedding);
    expect(a).toHaveLength(1536);
    expect(a).toEqual(b);
    const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i], 0);
    expect(dot(a, a)).toBeCloseTo(1, 4);
    expect(dot(a, c)).toBeLessThan(0.5);
    const large = await client.embeddings.create({ model: 'text-embedding-3-large', input: 'x', encoding_format: 'float' });
    expect(large.data[0].embedding).toHaveLength(3072);
  });
});
