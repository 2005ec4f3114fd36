/**
 * Keys of another project (DB auth mode): an owner that can create a key for another project
 * of its tenant can also list, rotate and revoke it; admins stay in their own project; nobody
 * reaches another tenant; a key never manages a key of a higher role.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { BOOTSTRAP_TOKEN, bearer, perFileDatabase, provisionKey, startDbServer, type DbServer } from './db-auth-helpers.js';

const hasPg = await requirePostgres('keys of another project');
const database = perFileDatabase('keys_projects');

afterAll(async () => {
  await database.drop();
});

interface Key { key_id: string; secret: string; project_id: string; role: string }

describe.skipIf(!hasPg)('managing the keys of another project of the tenant', () => {
  let t: DbServer;
  let owner: Key;
  let admin: Key;
  let otherOwner: { key_id: string; secret: string };
  const create = async (by: string, body: Record<string, unknown>) => {
    const res = await t.call('POST', '/v1/keys', body, bearer(by));
    expect(res.statusCode).toBe(201);
    return res.json() as Key;
  };
  const list = (by: string, query = '') => t.call('GET', `/v1/keys${query}`, undefined, bearer(by));
  const ids = (res: { json(): unknown }) => (res.json() as { keys: Key[] }).keys.map((k) => k.key_id);

  beforeAll(async () => {
    t = await startDbServer((await database.schema()).url);
    owner = (await t.call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN })).json() as Key;
    admin = await create(owner.secret, { name: 'admin of default', role: 'admin' });
    otherOwner = await provisionKey(t.keyStore, { tenant_id: 'tenant_b', project_id: 'default', role: 'owner' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('an owner lists another project\'s keys (project_id) or every project\'s (all_projects)', async () => {
    const ci = await create(owner.secret, { name: 'ci of other', role: 'editor', project_id: 'other' });
    expect(ci.project_id).toBe('other');

    expect(ids(await list(owner.secret))).not.toContain(ci.key_id);
    const other = await list(owner.secret, '?project_id=other');
    expect(other.statusCode).toBe(200);
    expect(ids(other)).toEqual([ci.key_id]);
    const all = await list(owner.secret, '?all_projects=true');
    expect(ids(all)).toEqual(expect.arrayContaining([owner.key_id, admin.key_id, ci.key_id]));
    // Never another tenant's keys.
    expect(ids(all)).not.toContain(otherOwner.key_id);
    expect(ids(await list(otherOwner.secret, '?all_projects=true'))).toEqual([otherOwner.key_id]);

    expect((await list(owner.secret, '?project_id=other&all_projects=true')).statusCode).toBe(422);
    expect((await list(owner.secret, '?project_id=no%20such')).statusCode).toBe(422);
  });

  it('an owner rotates and revokes a key of another project; the old secret and then the key stop working', async () => {
    const ci = await create(owner.secret, { name: 'leaked', role: 'editor', project_id: 'leaky' });
    const rotated = await t.call('POST', `/v1/keys/${ci.key_id}/rotate`, undefined, bearer(owner.secret));
    expect(rotated.statusCode).toBe(200);
    const next = rotated.json() as Key;
    expect(next).toMatchObject({ key_id: ci.key_id, project_id: 'leaky' });
    expect((await t.call('GET', '/v1/health', undefined, bearer(ci.secret))).statusCode).toBe(401);
    expect((await t.call('GET', '/v1/health', undefined, bearer(next.secret))).statusCode).toBe(200);

    const revoked = await t.call('DELETE', `/v1/keys/${ci.key_id}`, undefined, bearer(owner.secret));
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ key_id: ci.key_id, status: 'revoked', project_id: 'leaky' });
    expect((await t.call('GET', '/v1/health', undefined, bearer(next.secret))).statusCode).toBe(401);
  });

  it('an admin stays in its own project: 403 listing another, 404 for another project\'s key', async () => {
    const elsewhere = await create(owner.secret, { name: 'elsewhere', role: 'reader', project_id: 'p2' });
    const refused = await list(admin.secret, '?project_id=p2');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().detail).toMatch(/only owner keys/);
    expect((await list(admin.secret, '?all_projects=true')).statusCode).toBe(403);
    // Naming its own project is the plain list.
    expect((await list(admin.secret, '?project_id=default')).statusCode).toBe(200);
    for (const [method, path] of [['DELETE', `/v1/keys/${elsewhere.key_id}`], ['POST', `/v1/keys/${elsewhere.key_id}/rotate`]] as const) {
      const res = await t.call(method, path, undefined, bearer(admin.secret));
      expect(res.statusCode).toBe(404);
      expect(res.json().detail).toMatch(/not found in this project/);
    }
    expect(ids(await list(owner.secret, '?project_id=p2'))).toEqual([elsewhere.key_id]);
  });

  it('no key reaches another tenant, and none manages a key above its role', async () => {
    const theirs = await provisionKey(t.keyStore, { tenant_id: 'tenant_b', project_id: 'p9', role: 'reader' });
    for (const [method, path] of [['DELETE', `/v1/keys/${theirs.key_id}`], ['POST', `/v1/keys/${theirs.key_id}/rotate`]] as const) {
      const res = await t.call(method, path, undefined, bearer(owner.secret));
      expect(res.statusCode).toBe(404);
      expect(res.json().detail).toMatch(/not found in this tenant/);
    }
    expect((await t.call('GET', '/v1/health', undefined, bearer(theirs.secret))).statusCode).toBe(200);

    // An admin cannot touch an owner key of its own project.
    const owner2 = await create(owner.secret, { name: 'second owner', role: 'owner' });
    const up = await t.call('DELETE', `/v1/keys/${owner2.key_id}`, undefined, bearer(admin.secret));
    expect(up.statusCode).toBe(403);
    expect(up.json().detail).toMatch(/admin key cannot revoke owner keys/);
    // Editors and readers cannot list at all, not even with a project named.
    const editor = await create(owner.secret, { name: 'editor', role: 'editor' });
    expect((await list(editor.secret, '?project_id=other')).statusCode).toBe(403);
  });
});
