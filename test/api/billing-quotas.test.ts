import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { monthStart } from '../../src/core/billing.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { llmEnv, makeLlm, scores } from '../llm/helpers.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { billingEnv, seedPatterns, useFakePayments } from './billing-support.js';
import { learnBody, ManualClock, startServer, type TestServer } from './helpers.js';

const hasPg = await requirePostgres('billing quotas');
const payments = await useFakePayments();
const llm = await useFakeLlm();

/** Test data arrives in bulk: the counters and patterns a tenant would have after a busy month. */
async function seedEvalRuns(t: TestServer, dbUrl: string | null, now: Date, value: number): Promise<void> {
  if (dbUrl) {
    await adminQuery(
      `INSERT INTO usage_counters (tenant_id, period_start, metric, value) VALUES ('default', $1, 'eval_runs', $2)
       ON CONFLICT (tenant_id, period_start, metric) DO UPDATE SET value = $2`,
      [monthStart(now), value], dbUrl,
    );
    return;
  }
  // JSON: the billing file is read on the first billing call, which has not happened yet on this server.
  const usage = { default: { [monthStart(now)]: { eval_runs: value, billed_blocks: 0 } } };
  await writeFile(join(t.dataPath, 'billing.json'), JSON.stringify({ accounts: {}, usage, events: {} }));
}


const STORAGES = ['json', 'postgres'] as const;

describe.each(STORAGES)('quotas at their boundaries (%s storage, sandbox plan, billing on)', (kind) => {
  let t: TestServer;
  let db: TestDatabase | null = null;
  let dbUrl: string | null = null;
  const clock = new ManualClock(new Date('2025-03-20T10:00:00.000Z'));
  const evaluate = () => t.call('POST', '/v1/evaluate', { task: 'sum a list', code: 'print(sum([1,2]))', num_evals: 1 });

  beforeAll(async () => {
    if (kind === 'postgres') {
      if (!hasPg) return;
      db = await createTestDatabase('billing_quotas');
      dbUrl = (await createMigratedSchema(db, 'q')).url;
    }
    const env = { ...billingEnv(payments), ...llmEnv(llm, 'provider_a'), ...(dbUrl ? { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: dbUrl } : {}) };
    t = await startServer(env, { clock, llm: makeLlm(loadConfig(env)) });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it.skipIf(kind === 'postgres' && !hasPg)('eval runs: limit - 1 passes, the limit answers 429 with reset_date; a failed evaluate is not counted; a new month resets', async () => {
    await seedEvalRuns(t, dbUrl, clock.now(), 499);
    llm.script(() => reply.error(400, { message: 'bad request' }));
    expect((await evaluate()).statusCode).toBe(503);
    expect((await t.call('GET', '/v1/billing/status')).json().eval_runs_used).toBe(499);

    llm.script(() => reply.json(scores(7)));
    expect((await evaluate()).statusCode).toBe(200);
    const refused = await evaluate();
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: 'quota_exceeded', metric: 'eval_runs', current: 500, limit: 500, reset_date: '2025-04-01' });
    expect((await t.call('GET', '/v1/billing/status')).json().eval_runs_used).toBe(500);

    clock.set('2025-04-01T00:00:00.000Z');
    expect((await evaluate()).statusCode).toBe(200);
    expect((await t.call('GET', '/v1/billing/status')).json()).toMatchObject({ eval_runs_used: 1, reset_date: '2025-05-01' });
  });

  it.skipIf(kind === 'postgres' && !hasPg)('patterns: import counts current + records; learn passes at limit - 1 and answers 429 at the limit', async () => {
    await seedPatterns(t, dbUrl, 4998);
    const record = (task: string) => ({ task, code: `// ${task}`, eval_score: 7 });
    const tooMany = await t.call('POST', '/v1/import', { records: [record('import one alpha'), record('import two beta'), record('import three gamma')] });
    expect(tooMany.statusCode).toBe(429);
    expect(tooMany.json()).toMatchObject({ error: 'quota_exceeded', metric: 'patterns', current: 4998, limit: 5000, reset_date: '2025-05-01' });
    expect((await t.call('POST', '/v1/import', { records: [record('import one alpha')] })).json()).toMatchObject({ imported: 1 });

    const last = await t.call('POST', '/v1/learn', learnBody('render a markdown table from rows'));
    expect(last.statusCode).toBe(200);
    expect(last.json().pattern_count).toBe(5000);
    const over = await t.call('POST', '/v1/learn', learnBody('compress a folder into a zip archive'));
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ error: 'quota_exceeded', metric: 'patterns', current: 5000, limit: 5000, reset_date: '2025-05-01' });
  });
});
