import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { newAccount } from '../../src/core/billing.js';
import { ForbiddenError } from '../../src/core/errors.js';
import { createJsonBillingRepository } from '../../src/adapters/storage/json/billing-repo.js';
import { createStripeProcessor } from '../../src/adapters/payments/stripe.js';
import { silentLogger } from '../../src/ports/observability.js';
import type { PatternRepository } from '../../src/ports/storage.js';
import { Billing } from '../../src/services/billing.js';
import { ManualClock } from './helpers.js';

/** Plan features at the service edge: OIDC principals need enterprise (403 naming the plan). */
describe('plan features', () => {
  let dir: string;
  let billing: Billing;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-billing-features-'));
    const noPatterns = { listScopes: async () => [], count: async () => 0 } as unknown as PatternRepository;
    const repo = createJsonBillingRepository(dir, noPatterns);
    const config = loadConfig({ PAYMENT_SECRET_KEY: 'sk_test_x', SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true' });
    const payments = createStripeProcessor({ secretKey: 'sk_test_x', webhookSecret: null, apiBaseUrl: 'http://127.0.0.1:9' });
    billing = new Billing({ config, clock: new ManualClock(), logger: silentLogger, repo, payments });
    const now = new Date('2025-01-01T00:00:00Z');
    for (const [tenant, plan] of [['ent', 'enterprise'], ['teamco', 'team']] as const) {
      await repo.updateAccount(tenant, () => newAccount(tenant, now), (a) => ({ ...a, plan_tier: plan }));
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('OIDC sign-in: enterprise passes; team and sandbox get 403 naming enterprise; API keys are not affected', async () => {
    await expect(billing.checkAccess('ent', 'oidc')).resolves.toBeUndefined();
    await expect(billing.checkAccess('teamco', 'oidc')).rejects.toThrow(/OIDC single sign-on needs the enterprise plan or higher; this tenant is on the team plan/);
    await expect(billing.checkAccess('newco', 'oidc')).rejects.toBeInstanceOf(ForbiddenError);
    await expect(billing.checkAccess('newco', 'db')).resolves.toBeUndefined();
  });

  it('async jobs and the export need pro or higher', async () => {
    await expect(billing.requireFeature('newco', 'async_jobs')).rejects.toThrow(/needs the pro plan/);
    await expect(billing.requireFeature('teamco', 'governance_export')).resolves.toBeUndefined();
  });
});
