/**
 * The judge cache, tokens and cost of POST /v1/evaluate (docs/behavior.md "Judge cache",
 * "Evaluation cost") through the real SDKs against the fake provider, on both storages: the
 * fake counts every chat call that crosses the wire.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EvaluateResponse } from '../../src/contracts/llm.js';
import { costUsd, DEFAULT_MODEL_PRICES } from '../../src/core/pricing.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import type { TestServer } from '../api/helpers.js';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { PROVIDERS, scores, startLlmServer } from './helpers.js';

const fake = await useFakeLlm();
const hasPg = await requirePostgres('judge cache on PostgreSQL');

const USAGE = { input_tokens: 1200, output_tokens: 80 };
const CASE = { task: 'Add two numbers', code: 'def add(a, b):\n    return a + b\n', output: '3' };

/** Every evaluator answers `overall` with the fixed usage. */
function judgeAll(overall = 7): void {
  fake.script(() => reply.json(scores(overall), { usage: USAGE }));
}

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function evaluate(t: TestServer, body: Record<string, unknown>) {
  const res = await t.call('POST', '/v1/evaluate', body);
  return { status: res.statusCode, body: res.json() };
}

const STORAGES = ['json', ...(hasPg ? ['postgres'] : [])] as const;

describe.each(STORAGES)('judge cache on %s storage', (kind) => {
  let storageEnv: Record<string, string>;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    if (kind === 'json') {
      const dir = await mkdtemp(join(tmpdir(), 'svc-judge-cache-'));
      storageEnv = { SERVICE_DATA_PATH: dir };
      cleanup = () => rm(dir, { recursive: true, force: true });
    } else {
      const db: TestDatabase = await createTestDatabase('judge_cache');
      const schema = await createMigratedSchema(db, 'jc');
      storageEnv = { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url };
      cleanup = () => db.drop();
    }
  }, 120_000);
  afterAll(async () => cleanup?.());

  /** A server on this describe's store (JSON: one at a time, the data path is locked). */
  async function server(extra: Record<string, string> = {}): Promise<TestServer> {
    // PostgreSQL keeps the rate limiter's counts in the store, shared by this describe's servers.
    const t = await startLlmServer(fake, 'provider_a', { ...storageEnv, SERVICE_RATE_LIMIT_EXPENSIVE: '10000', SERVICE_RATE_LIMIT_DEFAULT: '10000', ...extra });
    servers.push(t);
    return t;
  }

  it('a rerun of unchanged cases makes no provider call and answers the same verdict', async () => {
    const t = await server();
    judgeAll(7);
    const cases = [1, 2, 3].map((i) => ({ ...CASE, code: `${CASE.code}# rerun ${kind} ${i}\n` }));
    const first = [];
    for (const c of cases) first.push(await evaluate(t, c));
    expect(first.map((r) => r.body.cache_hit)).toEqual([false, false, false]);
    expect(fake.chatRequests()).toHaveLength(9);

    fake.reset();
    judgeAll(2);
    for (const [i, c] of cases.entries()) {
      const again = await evaluate(t, c);
      expect(again.status).toBe(200);
      const result = EvaluateResponse.parse(again.body);
      expect(result).toMatchObject({ cache_hit: true, llm_calls: 0, tokens: { input: 0, output: 0 }, cost_usd: 0 });
      expect(result.median_score).toBe(first[i].body.median_score);
      expect(result.scores).toEqual(first[i].body.scores);
    }
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it('a changed judge configuration misses: number of evaluators, model, repeat slot', async () => {
    const c = { ...CASE, code: `${CASE.code}# config ${kind}\n` };
    let t = await server();
    judgeAll(7);
    expect((await evaluate(t, c)).body.cache_hit).toBe(false);
    expect((await evaluate(t, c)).body.cache_hit).toBe(true);
    fake.reset();
    judgeAll(7);
    expect((await evaluate(t, { ...c, num_evals: 2 })).body.cache_hit).toBe(false);
    expect((await evaluate(t, { ...c, sample: 1 })).body.cache_hit).toBe(false);
    expect((await evaluate(t, { ...c, output: '4' })).body.cache_hit).toBe(false);
    expect(fake.chatRequests()).toHaveLength(2 + 3 + 3);
    await servers.pop()!.close();

    // Another model over the same store: its verdicts are its own.
    fake.reset();
    judgeAll(7);
    t = await server({ SERVICE_LLM_MODEL: 'gpt-4o' });
    const other = await evaluate(t, c);
    expect(other.body).toMatchObject({ cache_hit: false, judge: { model: 'gpt-4o', num_evals: 3 } });
    expect(fake.chatRequests()).toHaveLength(3);
  });

  it('errors are never cached: a failed evaluator or a failed call is judged again next time', async () => {
    const t = await server();
    const c = { ...CASE, code: `${CASE.code}# errors ${kind}\n` };
    let n = 0;
    // One evaluator (and its 3 retries) fails; the others answer.
    fake.script(() => (n++ < 2 ? reply.json(scores(6), { usage: USAGE }) : reply.error(500)));
    const partial = await evaluate(t, c);
    expect(partial.body).toMatchObject({ failed_evaluators: 1, cache_hit: false });

    fake.reset();
    fake.script(() => reply.error(500));
    expect((await evaluate(t, c)).status).toBe(503);

    fake.reset();
    judgeAll(8);
    const fresh = await evaluate(t, c);
    expect(fresh.body).toMatchObject({ cache_hit: false, failed_evaluators: 0, median_score: 8 });
    expect(fake.chatRequests()).toHaveLength(3);
  });

  it('no_cache judges afresh and leaves the cache alone', async () => {
    const t = await server();
    const c = { ...CASE, code: `${CASE.code}# no-cache ${kind}\n` };
    judgeAll(7);
    await evaluate(t, c);
    fake.reset();
    judgeAll(3);
    const fresh = await evaluate(t, { ...c, no_cache: true });
    expect(fresh.body).toMatchObject({ cache_hit: false, median_score: 3 });
    // The cached verdict is still the first one.
    expect((await evaluate(t, c)).body).toMatchObject({ cache_hit: true, median_score: 7 });
    expect(fake.chatRequests()).toHaveLength(3);
  });
});

describe.each(PROVIDERS)('tokens and cost from the provider\'s usage (%s)', (provider) => {
  it('sums every call of every evaluator, a malformed reply\'s retry included, and prices it', async () => {
    const t = await startLlmServer(fake, provider, { SERVICE_LLM_PRICES: 'judge-model=2:10', SERVICE_LLM_MODEL: 'judge-model' });
    servers.push(t);
    fake.enqueue(reply.text('not json at all', { usage: { input_tokens: 1000, output_tokens: 5 } }));
    fake.script(() => reply.json(scores(7), { usage: USAGE }));
    const { status, body } = await evaluate(t, { ...CASE, num_evals: 2 });
    expect(status).toBe(200);
    const result = EvaluateResponse.parse(body);
    expect(fake.chatRequests()).toHaveLength(3);
    expect(result.llm_calls).toBe(3);
    expect(result.tokens).toEqual({ input: 1000 + 2 * 1200, output: 5 + 2 * 80 });
    expect(result.cost_usd).toBe(costUsd(result.tokens, { input_per_mtok: 2, output_per_mtok: 10 }));
    expect(result.cost_usd).toBeCloseTo((3400 * 2 + 165 * 10) / 1e6, 12);
    expect(result.evaluators.map((e) => e.llm_calls).sort()).toEqual([1, 2]);
    expect(result.evaluators.every((e) => e.ok)).toBe(true);
    expect(result.judge).toMatchObject({ provider: provider === 'provider_a' ? 'openai' : 'anthropic', model: 'judge-model', num_evals: 2 });
  });
});

describe('max_cost_usd', () => {
  it('refuses a miss whose cost ceiling passes the budget before any call; a cached case costs nothing and is served', async () => {
    const t = await startLlmServer(fake, 'provider_a');
    servers.push(t);
    const c = { ...CASE, code: `${CASE.code}# budget\n` };
    const refused = await evaluate(t, { ...c, max_cost_usd: 0.0001 });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'budget_exceeded' });
    expect(refused.body.detail).toMatch(/may cost up to \$[\d.]+ .*more than max_cost_usd \$0.0001; nothing was spent/);
    expect(fake.chatRequests()).toHaveLength(0);

    judgeAll(7);
    const paid = await evaluate(t, { ...c, max_cost_usd: 1 });
    expect(paid.body).toMatchObject({ cache_hit: false });
    // gpt-4o-mini (the default model) at its shipped price.
    expect(paid.body.cost_usd).toBe(costUsd({ input: 3 * 1200, output: 3 * 80 }, DEFAULT_MODEL_PRICES['gpt-4o-mini']));
    fake.reset();
    const hit = await evaluate(t, { ...c, max_cost_usd: 0 });
    expect(hit.body).toMatchObject({ cache_hit: true, cost_usd: 0 });
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it('answers 422 naming SERVICE_LLM_PRICES when the model has no price', async () => {
    const t = await startLlmServer(fake, 'provider_a', { SERVICE_LLM_MODEL: 'local-coder' });
    servers.push(t);
    const res = await evaluate(t, { ...CASE, max_cost_usd: 1 });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toMatch(/SERVICE_LLM_PRICES/);
    // Without a budget an unpriced model is judged; its cost is unknown.
    judgeAll(7);
    expect((await evaluate(t, { ...CASE })).body).toMatchObject({ cost_usd: null, tokens: { input: 3600, output: 240 } });
  });
});
