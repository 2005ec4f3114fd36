import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../src/contracts/errors.js';
import { errorRow, type WireErrorCode } from '../../src/core/error-table.js';
import { StorageUnavailableError } from '../../src/core/errors.js';
import type { Embedder } from '../../src/ports/embedder.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { startLlmServer } from '../llm/helpers.js';
import { learnBody, patchedJsonStorage, startServer, type TestServer } from './helpers.js';

/**
 * Every error body carries a stable `code` (README's error table); each code is produced
 * here by its real trigger, and its status is the one the table gives.
 */
const fake = await useFakeLlm();
const servers: TestServer[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()?.close();
});
afterAll(async () => {
  while (servers.length) await servers.pop()?.close();
});
async function start(...args: Parameters<typeof startServer>): Promise<TestServer> {
  const t = await startServer(...args);
  servers.push(t);
  return t;
}

function expectCode(res: { statusCode: number; json(): unknown }, code: WireErrorCode): Record<string, unknown> {
  const body = ErrorBody.parse(res.json());
  expect(body.code).toBe(code);
  expect(res.statusCode).toBe(errorRow(code).status);
  return body;
}

describe('stable error codes', () => {
  it('validation_failed, not_found, method_not_allowed, payload_too_large, bad_request', async () => {
    const t = await start({ SERVICE_MAX_BODY_SIZE: '2000' });
    const invalid = expectCode(await t.call('POST', '/v1/learn', { task: 'x', code: 'y', eval_score: 11 }), 'validation_failed');
    expect(invalid.errors).toEqual([expect.objectContaining({ path: 'eval_score' })]);
    expectCode(await t.call('DELETE', `/v1/patterns/${encodeURIComponent('patterns/abc123')}`), 'not_found');
    expectCode(await t.call('GET', '/v1/nowhere'), 'not_found');

    const wrongMethod = await t.call('DELETE', '/v1/learn');
    expectCode(wrongMethod, 'method_not_allowed');
    expect(wrongMethod.headers.allow).toBe('POST');
    const recallMethods = await t.call('PUT', '/v1/recall');
    expect(recallMethods.headers.allow).toBe('GET, HEAD, POST');
    expectCode(await t.call('PATCH', `/v1/jobs/${'a'.repeat(8)}`), 'method_not_allowed');

    expectCode(await t.call('POST', '/v1/learn', learnBody('big', { code: 'x'.repeat(5000) })), 'payload_too_large');
    const badLength = await t.server.inject({
      method: 'POST', url: '/v1/learn', payload: '{"task":"a"}', headers: { 'content-type': 'application/json', 'content-length': '3' },
    });
    expect(badLength.statusCode).toBe(400);
    expect(ErrorBody.parse(badLength.json()).code).toBe('bad_request');
  });

  it('unauthenticated, forbidden and rate_limited', async () => {
    const key = 'svc_codes_key_dddddddddddddddddddddddddddddddddd';
    const t = await start({ SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: key, SERVICE_ENV_AUTH_ROLE: 'reader', SERVICE_RATE_LIMIT_DEFAULT: '3' });
    expectCode(await t.call('POST', '/v1/recall', { task: 'x' }), 'unauthenticated');
    const auth = { authorization: `Bearer ${key}` };
    const forbidden = expectCode(await t.call('POST', '/v1/learn', learnBody('reader may not learn'), auth), 'forbidden');
    expect(forbidden.detail).toContain('learn');
    expect((await t.call('GET', '/v1/metrics', undefined, auth)).statusCode).toBe(200); // the third of three
    const limited = expectCode(await t.call('GET', '/v1/metrics', undefined, auth), 'rate_limited');
    expect(limited.detail).toEqual(expect.any(String));
  });

  it('maintenance, storage_unavailable, embedding_unavailable and internal_error', async () => {
    const maintenance = await start({ SERVICE_MAINTENANCE: 'true' });
    expectCode(await maintenance.call('POST', '/v1/recall', { task: 'x' }), 'maintenance');

    const downStorage = await patchedJsonStorage((real) => ({
      patterns: { ...real.patterns, count: async () => { throw new StorageUnavailableError('storage unavailable: PostgreSQL cannot be reached'); } },
    }));
    const storageDown = await start({}, { storage: downStorage });
    expectCode(await storageDown.call('GET', '/v1/metrics'), 'storage_unavailable');

    const brokenEmbedder: Embedder = {
      info: { provider: 'local', model: 'broken', dimension: 4 },
      embed: async () => { throw new Error('model file vanished'); },
    };
    const noEmbeddings = await start({}, { embedder: brokenEmbedder });
    expectCode(await noEmbeddings.call('POST', '/v1/learn', learnBody('cannot be embedded')), 'embedding_unavailable');

    const crashing = await patchedJsonStorage(() => ({
      recordLearn: async () => { throw new TypeError('undefined is not a function'); },
    }));
    const internal = await start({}, { storage: crashing });
    const body = expectCode(await internal.call('POST', '/v1/learn', learnBody('crash')), 'internal_error');
    expect(body.detail).toBe('internal error');
  });

  it('llm_not_configured, llm_unavailable and bad_gateway', async () => {
    const noLlm = await start();
    expectCode(await noLlm.call('POST', '/v1/evaluate', { task: 't', code: 'c' }), 'llm_not_configured');

    const t = await startLlmServer(fake, 'provider_a', { SERVICE_RATE_LIMIT_EXPENSIVE: '100' });
    servers.push(t);
    fake.script(() => reply.error(400, { message: 'bad request from provider' }));
    expectCode(await t.call('POST', '/v1/evaluate', { task: 't', code: 'c', num_evals: 1 }), 'llm_unavailable');
    fake.script(() => reply.text('this is not json'));
    expectCode(await t.call('POST', '/v1/compose', { task: 'split me into stages' }), 'bad_gateway');
  });
});
