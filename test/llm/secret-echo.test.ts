/**
 * Issue 18 (6): a provider whose error text repeats the caller's key (as OpenAI's "Incorrect
 * API key provided: sk-…" does) must not get that key into a response or a log line: evaluate,
 * compose, and learn with hosted embeddings, on both provider SDKs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { configuredSecrets } from '../../src/config/secrets.js';
import { loadConfig, type Env } from '../../src/config/index.js';
import { scrubSecretText } from '../../src/core/secret-scrub.js';
import { startServer } from '../api/helpers.js';
import { FAST_RETRIES, PROVIDERS } from './helpers.js';
import { createLlm } from '../../src/adapters/llm/index.js';
import { noopInstruments } from '../../src/ports/observability.js';

const KEY_A = 'sk-proj-Echoed0Provider0Key0For0Tests0123456789';
const KEY_B = 'custom-gateway-key-without-a-known-shape-42';

/** Answers every call 401 with an error body quoting the key it was sent. */
let echo: Server;
let base: string;
beforeAll(async () => {
  echo = createServer((req, res) => {
    const sent = String(req.headers['x-api-key'] ?? req.headers.authorization ?? '').replace(/^Bearer /, '');
    req.resume();
    req.on('end', () => {
      res.writeHead(401, { 'content-type': 'application/json' });
      const message = `Incorrect API key provided: ${sent}. You can find your API key at https://example.invalid.`;
      res.end(JSON.stringify({ type: 'error', error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    });
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));

describe('scrubSecretText', () => {
  it('removes configured secrets and key-shaped strings, leaves ordinary text', () => {
    expect(scrubSecretText(`bad key ${KEY_B} here`, [KEY_B])).toBe('bad key [REDACTED] here');
    expect(scrubSecretText('key sk-ant-api03-abcdefgh12345678 and AKIAABCDEFGHIJKLMNOP')).toBe('key [REDACTED] and [REDACTED]');
    expect(scrubSecretText('Authorization: Bearer abc.def.ghi123')).toBe('Authorization: [REDACTED]');
    expect(scrubSecretText('the task-list is short', ['short'])).toBe('the task-list is short');
  });
});

describe.each(PROVIDERS)('provider errors echoing the key (%s)', (provider) => {
  it('evaluate, compose and hosted-embedding learn answer 503 without the key; no log line holds it', async () => {
    const key = provider === 'provider_a' ? KEY_A : KEY_B;
    const env: Env = {
      SERVICE_LLM_PROVIDER: provider,
      SERVICE_LLM_BASE_URL: provider === 'provider_a' ? `${base}/v1` : base,
      LLM_PROVIDER_A_API_KEY: key,
      LLM_PROVIDER_B_API_KEY: key,
      SERVICE_LOCAL_EMBEDDINGS: '',
      SERVICE_EMBEDDING_MODEL_PATH: '',
      SERVICE_LLM_TIMEOUT: '5',
    };
    const lines: string[] = [];
    const config = loadConfig({ SERVICE_DATA_PATH: '/unused', ...env });
    const logger = createLogger({ level: 'debug', json: true, destination: { write: (l) => lines.push(l) }, secrets: configuredSecrets(config) });
    const llm = createLlm(config, { instruments: noopInstruments, logger, retryPolicy: FAST_RETRIES });
    const t = await startServer(env, { logger, llm: llm! });
    try {
      const answers = [
        await t.call('POST', '/v1/evaluate', { task: 'add', code: 'def add(a, b): return a + b', num_evals: 1 }),
        await t.call('POST', '/v1/compose', { task: 'fetch a page and count its words' }),
        await t.call('POST', '/v1/learn', { task: 'hosted embedding task', code: 'x()', eval_score: 5 }),
      ];
      for (const res of answers) {
        expect(res.statusCode, res.body).toBe(503);
        expect(res.body).not.toContain(key);
      }
      // The provider's own words still reach the caller, minus the key.
      expect(answers[0].json().detail).toMatch(/Incorrect API key provided: \[REDACTED\]/);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).not.toContain(key);
    } finally {
      await t.close();
    }
  });
});
