/**
 * Two apps (two pools, as two server processes would have) on one PostgreSQL database: many
 * evaluate calls near the monthly limit, split across both, never pass it and lose no count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { llmEnv, makeLlm, scores } from '../llm/helpers.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { billingEnv, useFakePayments } from '../api/billing-support.js';
import { ManualClock, startServer, type TestServer } from '../api/helpers.js';

const hasPg = await requirePostgres('billing concurrency');
const payments = await useFakePayments();
const llm = await useFakeLlm();

describe.skipIf(!hasPg)('eval-run limit under concurrency, two apps on one database', () => {
  let db: TestDatabase;
  let url: string;
  let one: TestServer;
  let two: TestServer;
  const clock = new ManualClock(new Date('2025-07-15T09:00:00.000Z'));

  beforeAll(async () => {
    db = await createTestDatabase('billing_conc');
    url = (await createMigratedSchema(db, 'c')).url;
    const env = { ...billingEnv(payments), ...llmEnv(llm, 'provider_a'), SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: url, SERVICE_RATE_LIMIT_EXPENSIVE: '1000' };
    [one, two] = await Promise.all([
      startServer(env, { clock, llm: makeLlm(loadConfig(env)) }),
      startServer(env, { clock, llm: makeLlm(loadConfig(env)) }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await db?.drop();
  });

  it('30 concurrent evaluates with 10 runs left: exactly 10 succeed, 20 get 429, the counter ends at the limit', async () => {
    await adminQuery(
      "INSERT INTO usage_counters (tenant_id, period_start, metric, value) VALUES ('default', '2025-07-01', 'eval_runs', 490)",
      [], url,
    );
    // A little latency keeps many evaluates in flight at once; correctness does not depend on it.
    llm.script(() => reply.json(scores(6), { delayMs: 20 }));
    const body = { task: 'sum a list', code: 'print(sum([1,2]))', num_evals: 1 };
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? one : two).call('POST', '/v1/evaluate', body)),
    );
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    for (const r of results.filter((x) => x.statusCode === 429)) {
      expect(r.json()).toMatchObject({ error: 'quota_exceeded', metric: 'eval_runs', limit: 500, reset_date: '2025-08-01' });
    }
    const counter = await adminQuery("SELECT value FROM usage_counters WHERE tenant_id = 'default' AND metric = 'eval_runs'", [], url);
    expect(Number(counter.rows[0].value)).toBe(500);
    expect((await two.call('GET', '/v1/billing/status')).json().eval_runs_used).toBe(500);
  });
});
