import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { newAccount, type BillingAccount } from '../../src/core/billing.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { llmEnv, makeLlm, scores } from '../llm/helpers.js';
import { billingEnv, invoice, sendEvent, useFakePayments } from './billing-support.js';
import { ManualClock, startServer, type TestServer } from './helpers.js';

const payments = await useFakePayments();
const llm = await useFakeLlm();
const NOW = '2025-05-20T10:00:00.000Z';

/** A server whose tenant starts with `account` and `evalRuns` runs this month (written before its first billing call). */
async function serverWith(account: Partial<BillingAccount>, evalRuns: number, billedBlocks = 0): Promise<TestServer> {
  const env = { ...billingEnv(payments), ...llmEnv(llm, 'provider_a') };
  const t = await startServer(env, { clock: new ManualClock(new Date(NOW)), llm: makeLlm(loadConfig(env)) });
  const state = {
    accounts: { default: { ...newAccount('default', new Date(NOW)), ...account } },
    usage: { default: { '2025-05-01': { eval_runs: evalRuns, billed_blocks: billedBlocks } } },
    events: {},
  };
  await writeFile(join(t.dataPath, 'billing.json'), JSON.stringify(state));
  return t;
}

const evaluate = (t: TestServer) => t.call('POST', '/v1/evaluate', { task: 'sum a list', code: 'print(sum([1,2]))', num_evals: 1 });
const invoiceItems = () => payments.calls.filter((c) => c.path === '/v1/invoiceitems');

describe('overage on pro: opt-in, billed per started block on invoice.created, each block once', () => {
  let t: TestServer;
  beforeAll(async () => {
    llm.script(() => reply.json(scores(7)));
    t = await serverWith({ plan_tier: 'pro', customer_id: 'cus_pro' }, 3000);
  });
  afterAll(() => t.close());

  it('at the quota without overage → 429 quota_exceeded; a cap is refused on pro', async () => {
    expect((await evaluate(t)).json()).toMatchObject({ error: 'quota_exceeded', current: 3000, limit: 3000 });
    // An async evaluate is refused when it is submitted, not later inside the job.
    const queued = await t.call('POST', '/v1/evaluate', { task: 'sum a list', code: 'x = 1', num_evals: 1 }, { prefer: 'respond-async' });
    expect(queued.statusCode).toBe(429);
    expect(queued.json()).toMatchObject({ error: 'quota_exceeded', metric: 'eval_runs' });
    expect((await t.call('PATCH', '/v1/billing/overage', { enabled: true, budget_cap_cents: 1000 })).statusCode).toBe(422);
  });

  it('overage on: runs go on; invoice.created adds 5 USD per started 500 runs, once', async () => {
    const patched = await t.call('PATCH', '/v1/billing/overage', { enabled: true });
    expect(patched.json()).toEqual({ overage_enabled: true, overage_budget_cap_cents: null });
    llm.script(() => reply.json(scores(7)));
    expect((await evaluate(t)).statusCode).toBe(200);
    expect((await evaluate(t)).statusCode).toBe(200);

    const first = await sendEvent(t, 'invoice.created', new Date(NOW), invoice('cus_pro', 'in_1'), { id: 'evt_inv_1' });
    expect(first.json()).toEqual({ received: true, applied: true });
    expect(invoiceItems()).toHaveLength(1);
    const item = invoiceItems()[0];
    expect(item.form.get('amount')).toBe('500');
    expect(item.form.get('currency')).toBe('usd');
    expect(item.form.get('invoice')).toBe('in_1');
    expect(item.form.get('customer')).toBe('cus_pro');

    // The same event again, and a later invoice with no new block: nothing more is charged.
    expect((await sendEvent(t, 'invoice.created', new Date(NOW), invoice('cus_pro', 'in_1'), { id: 'evt_inv_1' })).json().applied).toBe(false);
    expect((await sendEvent(t, 'invoice.created', new Date(NOW), invoice('cus_pro', 'in_2'))).json().applied).toBe(false);
    expect(invoiceItems()).toHaveLength(1);
  });
});

describe('a refused invoice item', () => {
  it('is retried by the processor and charged once then', async () => {
    // Block 1 was invoiced last time; run 3,501 started block 2.
    const t = await serverWith({ plan_tier: 'pro', customer_id: 'cus_retry', overage_enabled: true }, 3501, 1);
    try {
      payments.failNextInvoiceItem(400);
      const failed = await sendEvent(t, 'invoice.created', new Date(NOW), invoice('cus_retry', 'in_3'), { id: 'evt_inv_3' });
      expect(failed.statusCode).toBe(500);
      const retried = await sendEvent(t, 'invoice.created', new Date(NOW), invoice('cus_retry', 'in_3'), { id: 'evt_inv_3' });
      expect(retried.json()).toEqual({ received: true, applied: true });
      // The refused attempt and the accepted one: one block, 5 USD, charged once.
      expect(invoiceItems().map((c) => c.form.get('amount'))).toEqual(['500', '500']);
      expect((await sendEvent(t, 'invoice.created', new Date(NOW), invoice('cus_retry', 'in_3'), { id: 'evt_inv_3' })).json().applied).toBe(false);
      expect(invoiceItems()).toHaveLength(2);
    } finally {
      await t.close();
    }
  });
});

describe('overage budget cap on team', () => {
  it('a run that would start a block past the cap → 429 overage_budget_cap_reached', async () => {
    const t = await serverWith({ plan_tier: 'team', customer_id: 'cus_team', overage_enabled: true, overage_budget_cap_cents: 2500 }, 19_999);
    try {
      llm.script(() => reply.json(scores(7)));
      expect((await evaluate(t)).statusCode).toBe(200);
      const refused = await evaluate(t);
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error).toBe('overage_budget_cap_reached');
      // Raising the cap by one block lets runs continue; removing it lifts the bound.
      expect((await t.call('PATCH', '/v1/billing/overage', { enabled: true, budget_cap_cents: 5000 })).json()).toEqual({ overage_enabled: true, overage_budget_cap_cents: 5000 });
      expect((await evaluate(t)).statusCode).toBe(200);
      expect((await t.call('PATCH', '/v1/billing/overage', { enabled: true, budget_cap_cents: null })).json().overage_budget_cap_cents).toBeNull();
    } finally {
      await t.close();
    }
  });
});
