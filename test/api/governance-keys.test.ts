/**
 * Governance deletions in DB auth mode revoke the target's keys (the rows stay, revoked) and
 * clear the audit detail of the target, with patterns in PostgreSQL (one transaction) and in
 * JSON files (keys revoked through the key store right after). A revoked key answers 401.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { bearer, perFileDatabase, provisionKey, startDbServer } from './db-auth-helpers.js';
import { learnBody } from './helpers.js';

const hasPg = await requirePostgres('governance deletions in DB auth mode');
const database = perFileDatabase('gov_keys');
afterAll(async () => {
  await database.drop();
});

for (const storage of ['postgres', 'json'] as const) {
  describe.skipIf(!hasPg)(`DB auth mode, ${storage} storage: deletions revoke keys`, () => {
    it('project deletion revokes its keys; tenant deletion revokes all and scrubs the audit detail', async () => {
      const dataPath = await mkdtemp(join(tmpdir(), 'gov-keys-'));
      const env = storage === 'json' ? { SERVICE_STORAGE: 'json', SERVICE_DATA_PATH: dataPath } : {};
      const t = await startDbServer((await database.schema()).url, env);
      try {
        const owner = bearer((await provisionKey(t.keyStore, { tenant_id: 'acme', project_id: 'web', role: 'owner' })).secret);
        const other = bearer((await provisionKey(t.keyStore, { tenant_id: 'acme', project_id: 'other', role: 'editor' })).secret);
        const globex = bearer((await provisionKey(t.keyStore, { tenant_id: 'globex', project_id: 'web', role: 'owner' })).secret);
        for (const h of [owner, other, globex]) expect((await t.call('POST', '/v1/learn', learnBody('Deduplicate customer records by email'), h)).statusCode).toBe(200);
        expect((await t.call('GET', '/v1/metrics', undefined, { ...other, authorization: 'Bearer svc_wrong' })).statusCode).toBe(401);

        const project = await t.call('DELETE', '/v1/governance/projects/other', undefined, owner);
        expect(project.json()).toMatchObject({ tenant_id: 'acme', project_id: 'other', patterns_deleted: 1, keys_revoked: 1, projects_deleted: 1 });
        expect((await t.call('GET', '/v1/metrics', undefined, other)).statusCode).toBe(401);
        expect((await t.call('GET', '/v1/metrics', undefined, owner)).json().pattern_count).toBe(1);

        const tenant = await t.call('DELETE', '/v1/governance/tenants/acme', undefined, owner);
        expect(tenant.json()).toMatchObject({ tenant_id: 'acme', project_id: '*', patterns_deleted: 1, keys_revoked: 1 });
        expect((await t.call('GET', '/v1/metrics', undefined, owner)).statusCode).toBe(401);
        expect((await t.call('GET', '/v1/metrics', undefined, globex)).json().pattern_count).toBe(1);

        const events = await t.keyStore.audit.list({ tenant_id: 'acme', limit: 100 });
        const deletions = events.filter((e) => e.kind === 'TENANT_DELETED');
        expect(deletions).toHaveLength(1);
        expect(deletions[0].detail).toMatchObject({ patterns_deleted: 1, keys_revoked: 1 });
        // Everything before the tenant deletion kept its kind and time but lost its detail.
        const before = events.filter((e) => e.kind !== 'TENANT_DELETED' && e.at <= deletions[0].at && e.kind !== 'AUTH_FAILED');
        expect(before.length).toBeGreaterThan(0);
        for (const e of before) expect([e.kind, e.detail, e.ip]).toEqual([e.kind, {}, null]);
        const keys = await t.keyStore.keys.list({ tenant_id: 'acme', project_id: 'web' });
        expect(keys.every((k) => k.revoked_at !== null)).toBe(true);
      } finally {
        await t.close();
        await rm(dataPath, { recursive: true, force: true });
      }
    });

    it('dry runs of the project, tenant and scope deletions count keys, delete nothing, and warn about the caller\'s own key', async () => {
      const dataPath = await mkdtemp(join(tmpdir(), 'gov-keys-dry-'));
      const env = storage === 'json' ? { SERVICE_STORAGE: 'json', SERVICE_DATA_PATH: dataPath } : {};
      const t = await startDbServer((await database.schema()).url, env);
      try {
        const owner = bearer((await provisionKey(t.keyStore, { tenant_id: 'acme', project_id: 'web', role: 'owner' })).secret);
        const other = bearer((await provisionKey(t.keyStore, { tenant_id: 'acme', project_id: 'other', role: 'editor' })).secret);
        for (const h of [owner, other]) expect((await t.call('POST', '/v1/learn', learnBody('Deduplicate customer records by email'), h)).statusCode).toBe(200);

        const project = await t.call('DELETE', '/v1/governance/projects/other?dry_run=true', undefined, owner);
        expect(project.statusCode).toBe(200);
        expect(project.json()).toMatchObject({ project_id: 'other', patterns_deleted: 1, keys_revoked: 1, dry_run: true });
        // Not the caller's project: no warning.
        expect(project.json().warnings).toBeUndefined();
        const tenant = await t.call('DELETE', '/v1/governance/tenants/acme?dry_run=true', undefined, owner);
        expect(tenant.json()).toMatchObject({ project_id: '*', patterns_deleted: 2, keys_revoked: 2, dry_run: true });
        expect(tenant.json().warnings).toEqual([expect.stringMatching(/your own API key is among the keys this deletion would revoke/)]);
        const scope = await t.call('POST', '/v1/governance/delete-scope?dry_run=true', undefined, owner);
        expect(scope.json()).toMatchObject({ project_id: 'web', keys_revoked: 1, dry_run: true });
        expect(scope.json().warnings).toHaveLength(1);

        // Nothing was deleted or revoked.
        for (const h of [owner, other]) expect((await t.call('GET', '/v1/metrics', undefined, h)).json().pattern_count).toBe(1);
        expect((await t.call('DELETE', '/v1/governance/projects/other?dry_run=maybe', undefined, owner)).statusCode).toBe(422);

        const real = await t.call('POST', '/v1/governance/delete-scope', undefined, owner);
        expect(real.json()).toMatchObject({ keys_revoked: 1, dry_run: false });
        expect(real.json().warnings).toEqual([expect.stringMatching(/your own API key was revoked/)]);
      } finally {
        await t.close();
        await rm(dataPath, { recursive: true, force: true });
      }
    });
  });
}
