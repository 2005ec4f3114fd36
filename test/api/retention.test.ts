import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import type { Storage } from '../../src/ports/storage.js';
import { createMigratedSchema, createTestDatabase, pgConfig, requirePostgres, type TestDatabase } from '../support/pg.js';
import { startGovServer, type GovServer } from './governance.helpers.js';
import { learnBody, ManualClock } from './helpers.js';

const DAY = 86_400_000;
const T0 = new Date('2025-01-01T00:00:00.000Z');
const day = (n: number) => new Date(T0.getTime() + n * DAY).toISOString();

// Bearer tokens of test principals: <auth kind>.<role>.<tenant>.<project>
const ADMIN = 'db.admin.acme.web';
const EDITOR = 'db.editor.acme.web';
const READER = 'db.reader.acme.web';
const OTHER_PROJECT_ADMIN = 'db.admin.acme.other';
const ENV_ADMIN = 'env.admin.acme.*';
const WEB = { tenant_id: 'acme', project_id: 'web' };

const TASKS = {
  plain: 'Parse a CSV file and compute the average of the price column',
  shortExpiry: 'Render an invoice as a PDF document with a company logo in the header',
  longExpiry: 'Train a gradient boosted classifier on tabular churn data and report recall',
  later: 'Resize every uploaded image to a thumbnail and store it in an object bucket',
};

function retentionSuite(name: string, makeStorage?: () => Promise<Storage>): void {
  describe(`governance retention over ${name} storage`, () => {
    const clock = new ManualClock(new Date(T0));
    let t: GovServer;
    const keys: Record<keyof typeof TASKS, string> = { plain: '', shortExpiry: '', longExpiry: '', later: '' };

    const learn = async (token: string, task: string, extra: Record<string, unknown> = {}) => {
      const res = await t.call('POST', '/v1/learn', token, learnBody(task, extra));
      expect(res.statusCode).toBe(200);
      expect(res.json().stored).toBe(true);
      return res.json().pattern_key as string;
    };
    const idOf = (key: string) => key.slice('patterns/'.length);
    const exists = async (key: string) => (await t.app.deps.storage.patterns.get(WEB, idOf(key))) !== null;
    const apply = (body?: unknown, token = ADMIN) => t.call('POST', '/v1/governance/retention/apply', token, body);

    beforeAll(async () => {
      t = await startGovServer(clock, makeStorage ? { storage: await makeStorage() } : {});
      keys.plain = await learn(EDITOR, TASKS.plain);
      keys.shortExpiry = await learn(EDITOR, TASKS.shortExpiry, { expires_at: day(10) });
      // Its own expiry is later than any retention below: it must outlive them all.
      keys.longExpiry = await learn(EDITOR, TASKS.longExpiry, { expires_at: day(1000) });
      clock.set(day(200));
      keys.later = await learn(EDITOR, TASKS.later);
      // Same task text in another project of the tenant, learned at T0 like `plain`.
      clock.set(T0.toISOString());
      await learn(OTHER_PROJECT_ADMIN, TASKS.plain);
    });
    afterAll(async () => {
      await t?.close();
    });

    it('reports the 365-day default when nothing is configured', async () => {
      const res = await t.call('GET', '/v1/governance/retention', ADMIN);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ retention_days: 365, source: 'default' });
    });

    it('counts from updated_at with the default, and the pattern expires_at wins', async () => {
      clock.set(day(364));
      // Only the pattern whose own expires_at (day 10) passed; `plain` has one more day.
      expect((await apply({ dry_run: true })).json()).toEqual({ purged_count: 1, dry_run: true });
      clock.set(day(365));
      expect((await apply({ dry_run: true })).json()).toEqual({ purged_count: 2, dry_run: true });
      // A dry run deletes nothing.
      for (const key of Object.values(keys)) expect(await exists(key)).toBe(true);
    });

    it('deletes exactly the expired patterns of the caller scope and audits it', async () => {
      clock.set(day(366));
      const res = await apply({});
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ purged_count: 2, dry_run: false });
      expect(await exists(keys.plain)).toBe(false);
      expect(await exists(keys.shortExpiry)).toBe(false);
      expect(await exists(keys.longExpiry)).toBe(true);
      expect(await exists(keys.later)).toBe(true);
      expect(await t.app.deps.storage.patterns.count(WEB)).toBe(2);
      // The other project's pattern is just as old, but not in this scope.
      expect(await t.app.deps.storage.patterns.count({ tenant_id: 'acme', project_id: 'other' })).toBe(1);

      const audit = await t.app.deps.storage.audit.list({ tenant_id: 'acme', kind: 'RETENTION_APPLIED', limit: 10 });
      expect(audit[0]).toMatchObject({
        project_id: 'web',
        actor: ADMIN,
        detail: { purged_count: 2, dry_run: false, retention_days: 365, source: 'default' },
      });

      // Nothing left to purge: a second run is a no-op.
      expect((await apply()).json()).toEqual({ purged_count: 0, dry_run: false });
    });

    it('sets the project policy (DB auth), which then governs the patterns without expires_at', async () => {
      const put = await t.call('PUT', '/v1/governance/retention', ADMIN, { retention_days: 100 });
      expect(put.statusCode).toBe(200);
      expect(put.json()).toEqual({ retention_days: 100, source: 'project' });
      expect((await t.call('GET', '/v1/governance/retention', ADMIN)).json()).toEqual({ retention_days: 100, source: 'project' });
      // The other project still inherits the default.
      expect((await t.call('GET', '/v1/governance/retention', OTHER_PROJECT_ADMIN)).json().source).toBe('default');

      // `later` was updated on day 200: 100 days later it is past retention; `longExpiry` keeps its own date.
      clock.set(day(299));
      expect((await apply({ dry_run: true })).json().purged_count).toBe(0);
      clock.set(day(300));
      expect((await apply()).json()).toEqual({ purged_count: 1, dry_run: false });
      expect(await exists(keys.later)).toBe(false);
      expect(await exists(keys.longExpiry)).toBe(true);
    });

    it('falls back to the tenant value when the project clears its own', async () => {
      await t.app.deps.storage.projects.setTenantRetention('acme', 50, clock.now().toISOString());
      expect((await t.call('GET', '/v1/governance/retention', ADMIN)).json()).toEqual({ retention_days: 100, source: 'project' });
      const cleared = await t.call('PUT', '/v1/governance/retention', ADMIN, { retention_days: null });
      expect(cleared.json()).toEqual({ retention_days: 50, source: 'tenant' });
      expect((await t.call('GET', '/v1/governance/retention', OTHER_PROJECT_ADMIN)).json()).toEqual({ retention_days: 50, source: 'tenant' });
    });

    it('refuses to set the policy outside DB auth, with 403 {detail}', async () => {
      const res = await t.call('PUT', '/v1/governance/retention', ENV_ADMIN, { retention_days: 30 });
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toMatch(/DB auth/);
      expect((await t.call('GET', '/v1/governance/retention', ENV_ADMIN, undefined, { 'x-project-id': 'web' })).json().source).toBe('tenant');
    });

    it('validates bodies with 422', async () => {
      for (const body of [{}, { retention_days: 0 }, { retention_days: 36501 }, { retention_days: 1.5 }, { retention_days: '30' }, { retention_days: 30, x: 1 }]) {
        const res = await t.call('PUT', '/v1/governance/retention', ADMIN, body);
        expect(res.statusCode, JSON.stringify(body)).toBe(422);
        expect(res.json().detail).toEqual(expect.any(String));
      }
      expect((await t.call('PUT', '/v1/governance/retention', ADMIN, { retention_days: 36500 })).json().retention_days).toBe(36500);
      expect((await t.call('PUT', '/v1/governance/retention', ADMIN, { retention_days: 1 })).json().retention_days).toBe(1);
      for (const body of [{ dry_run: 'yes' }, { dry_run: true, extra: 1 }]) {
        expect((await apply(body)).statusCode).toBe(422);
      }
    });

    it('needs governance:read / write / admin (admin role)', async () => {
      expect((await t.call('GET', '/v1/governance/retention', READER)).statusCode).toBe(403);
      const read = await t.call('GET', '/v1/governance/retention', EDITOR);
      expect(read.statusCode).toBe(403);
      expect(read.json().detail).toContain('governance:read');
      expect((await t.call('PUT', '/v1/governance/retention', EDITOR, { retention_days: 5 })).json().detail).toContain('governance:write');
      const denied = await apply({ dry_run: true }, EDITOR);
      expect(denied.statusCode).toBe(403);
      expect(denied.json().detail).toContain('governance:admin');
    });
  });
}

retentionSuite('JSON');

const hasPg = await requirePostgres('governance retention API on PostgreSQL');
let database: Promise<TestDatabase> | null = null;
afterAll(async () => {
  if (database) await (await database).drop();
});
if (hasPg) {
  retentionSuite('PostgreSQL', async () => {
    database ??= createTestDatabase('retention_api');
    const schema = await createMigratedSchema(await database);
    return createPostgresStorage(pgConfig(schema.url));
  });
}
