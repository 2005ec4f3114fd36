import { afterAll, beforeEach } from 'vitest';
import type { Logger } from '../../src/ports/observability.js';
import { signedEvent, startFakePayments, WEBHOOK_SECRET, type FakePayments } from '../fixtures/fake-payments/server.js';
import type { PatternRecord } from '../../src/core/types.js';
import { adminQuery } from '../support/pg.js';
import type { TestServer } from './helpers.js';

export const PRICE_PRO = 'price_pro_monthly';
export const PRICE_TEAM = 'price_team_monthly';
export const PRICE_ENTERPRISE = 'price_enterprise_monthly';

/** One fake processor per test file, reset before each test. */
export async function useFakePayments(): Promise<FakePayments> {
  const fake = await startFakePayments();
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());
  return fake;
}

/** Environment of a hosted deployment whose processor is the fake. */
export function billingEnv(fake: FakePayments): Record<string, string> {
  return {
    PAYMENT_SECRET_KEY: 'sk_test_fake',
    PAYMENT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    PAYMENT_API_BASE_URL: fake.url,
    PAYMENT_PRICE_PRO_MONTHLY: PRICE_PRO,
    PAYMENT_PRICE_TEAM_MONTHLY: PRICE_TEAM,
    PAYMENT_PRICE_ENTERPRISE_MONTHLY: PRICE_ENTERPRISE,
  };
}

/** A Logger that keeps its lines, for asserting on `dunning_event` warnings. */
export class RecordingLogger implements Logger {
  lines: Array<{ level: string; obj: Record<string, unknown>; msg?: string }> = [];
  debug(obj: object, msg?: string) { this.lines.push({ level: 'debug', obj: obj as Record<string, unknown>, msg }); }
  info(obj: object, msg?: string) { this.lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg }); }
  warn(obj: object, msg?: string) { this.lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }); }
  error(obj: object, msg?: string) { this.lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg }); }
  dunning() {
    return this.lines.filter((l) => l.level === 'warn' && 'dunning_event' in l.obj);
  }
}

let eventSeq = 0;

/** Posts one signed payment event created at `at` (the event's own time). */
export async function sendEvent(
  t: Pick<TestServer, 'server'>,
  type: string,
  at: Date,
  object: Record<string, unknown>,
  opts: { id?: string; secret?: string; timestamp?: number } = {},
) {
  const { body, signature } = signedEvent(
    { id: opts.id ?? `evt_${process.pid}_${++eventSeq}`, type, created: Math.floor(at.getTime() / 1000), object },
    { secret: opts.secret, timestamp: opts.timestamp },
  );
  return t.server.inject({
    method: 'POST', url: '/v1/billing/webhook', payload: body,
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
  });
}

export function checkoutCompleted(tenant: string, customer: string, price: string): Record<string, unknown> {
  return {
    id: `cs_${customer}`, object: 'checkout.session', client_reference_id: tenant, customer,
    subscription: `sub_${customer}`, metadata: { tenant_id: tenant, price_id: price },
  };
}

export const invoice = (customer: string, id = `in_${customer}`) => ({ id, object: 'invoice', customer });
export const subscription = (customer: string) => ({ id: `sub_${customer}`, object: 'subscription', customer });

/**
 * `count` patterns in `project` of the tenant `default`, written in bulk (what a busy month
 * leaves): straight into PostgreSQL at `dbUrl`, else through the JSON storage's batch write.
 */
export async function seedPatterns(t: TestServer, dbUrl: string | null, count: number, project = 'default'): Promise<void> {
  const dim = t.app.deps.embedder.info.dimension;
  if (dbUrl) {
    await adminQuery(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       SELECT 'default', $3, 'seed' || g, 'seeded task number ' || g, 'x', 5, 5, now(), now(), $2::int,
              array_fill((g % 7 + 1)::real, ARRAY[$2::int])::vector
       FROM generate_series(1, $1::int) g`,
      [count, dim, project], dbUrl,
    );
    return;
  }
  const { patterns } = t.app.deps.storage;
  const stamp = '2025-06-01T00:00:00.000Z';
  for (let start = 0; start < count; start += 500) {
    const writes = Array.from({ length: Math.min(500, count - start) }, (_, j) => {
      const i = start + j;
      const vector = new Float32Array(dim);
      vector[i % dim] = 1;
      vector[(i * 7 + 3) % dim] = 0.5;
      const record: PatternRecord = {
        id: `seed${String(i).padStart(8, '0')}`, task: `seeded task number ${i}`, code: 'x', output: null, eval_score: 5,
        success_score: 5, reuse_count: 0, run_id: null, classification: 'internal', source: 'api', author: null,
        expires_at: null, redacted: false, created_at: stamp, updated_at: stamp, last_aged_at: null,
      };
      return { record, vector, replace: false };
    });
    await patterns.writeBatch!({ tenant_id: 'default', project_id: project }, writes);
  }
}
