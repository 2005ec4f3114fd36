import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_FORMAT } from '../../src/services/api-key-secrets.js';
import { adminQuery, requirePostgres, type TestSchema } from '../support/pg.js';
import { BOOTSTRAP_TOKEN, bearer, perFileDatabase, startDbServer, type DbServer } from './db-auth-helpers.js';
import { learnBody, ManualClock } from './helpers.js';

const hasPg = await requirePostgres('API keys');
const database = perFileDatabase('keys');

afterAll(async () => {
  await database.drop();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.skipIf(!hasPg)('POST /v1/keys/bootstrap', () => {
  let schema: TestSchema;
  const servers: DbServer[] = [];
  beforeAll(async () => {
    schema = await database.schema();
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it('is refused with 403 {detail} while SERVICE_BOOTSTRAP_TOKEN is unset', async () => {
    const t = await startDbServer(schema.url, { SERVICE_BOOTSTRAP_TOKEN: undefined });
    servers.push(t);
    const res = await t.call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toMatch(/SERVICE_BOOTSTRAP_TOKEN/);
    expect(await t.keyStore.tenants.anyKeyExists()).toBe(false);
  });

  it('answers 401 to a wrong token (audited, token never stored) and 422 to a missing one', async () => {
    const t = await startDbServer(schema.url);
    servers.push(t);
    const wrong = `${BOOTSTRAP_TOKEN.slice(0, -1)}X`;
    const res = await t.call('POST', '/v1/keys/bootstrap', { token: wrong });
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe('invalid bootstrap token');
    expect((await t.call('POST', '/v1/keys/bootstrap', {})).statusCode).toBe(422);
    const events = await t.app.deps.storage.audit.list({ kind: 'AUTH_FAILED', limit: 5 });
    expect(events[0].detail).toMatchObject({ reason: 'invalid bootstrap token' });
    expect(JSON.stringify(events)).not.toContain(wrong);
    expect(await t.keyStore.tenants.anyKeyExists()).toBe(false);
  });

  it('creates the default tenant, project and owner key once; the second call is 409', async () => {
    const t = await startDbServer(schema.url);
    servers.push(t);
    const res = await t.call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ key_id: expect.stringMatching(UUID), role: 'owner', tenant_id: 'default', project_id: 'default' });
    expect(body.secret).toMatch(API_KEY_FORMAT);

    const keys = await t.call('GET', '/v1/keys', undefined, bearer(body.secret));
    expect(keys.statusCode).toBe(200);
    expect(keys.json().keys).toEqual([expect.objectContaining({ key_id: body.key_id, role: 'owner', prefix: body.secret.slice(0, 12), status: 'active' })]);

    const again = await t.call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN });
    expect(again.statusCode).toBe(409);
    expect(again.json().detail).toMatch(/already bootstrapped/);

    // Only the digest is stored.
    const rows = await adminQuery(`SELECT key_hash, prefix FROM "${schema.schema}".api_keys`, [], schema.url);
    expect(rows.rows).toHaveLength(1);
    expect(JSON.stringify(rows.rows)).not.toContain(body.secret);
    const created = await t.app.deps.storage.audit.list({ kind: 'KEY_CREATED', limit: 5 });
    expect(created[0].detail).toMatchObject({ key_id: body.key_id, via: 'bootstrap' });
  });

  it('lets exactly one of many concurrent bootstraps across two server processes win', async () => {
    const fresh = await database.schema();
    const a = await startDbServer(fresh.url);
    const b = await startDbServer(fresh.url);
    servers.push(a, b);
    const attempts = Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN }));
    const statuses = (await Promise.all(attempts)).map((r) => r.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const count = await adminQuery(`SELECT count(*)::int AS n FROM "${fresh.schema}".api_keys`, [], fresh.url);
    expect(count.rows[0].n).toBe(1);
  });
});

describe.skipIf(!hasPg)('key management', () => {
  let t: DbServer;
  let other: DbServer; // a second server process on the same database
  let owner: string;
  const clock = new ManualClock(new Date());

  beforeAll(async () => {
    const schema = await database.schema();
    t = await startDbServer(schema.url, {}, { clock });
    other = await startDbServer(schema.url);
    owner = (await t.call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN })).json().secret;
  });
  afterAll(async () => {
    await t?.close();
    await other?.close();
  });

  const create = (secret: string, body: Record<string, unknown>) => t.call('POST', '/v1/keys', body, bearer(secret));

  it('creates an editor key by default; the secret appears only in that answer', async () => {
    const res = await create(owner, { name: 'ci pipeline' });
    expect(res.statusCode).toBe(201);
    const key = res.json();
    expect(key).toMatchObject({ name: 'ci pipeline', role: 'editor', project_id: 'default', max_patterns: null, expires_at: null, revoked_at: null, status: 'active' });
    expect(key.secret).toMatch(API_KEY_FORMAT);
    expect(key.prefix).toBe(key.secret.slice(0, 12));

    const list = await t.call('GET', '/v1/keys', undefined, bearer(owner));
    const listed = list.json().keys.find((k: { key_id: string }) => k.key_id === key.key_id);
    expect(Object.keys(listed).sort()).toEqual(
      ['created_at', 'expires_at', 'key_id', 'max_patterns', 'name', 'prefix', 'project_id', 'revoked_at', 'role', 'rotated_from', 'status'],
    );
    expect(list.body).not.toContain(key.secret);
    expect(list.json().count).toBe(list.json().keys.length);
    expect((await t.call('POST', '/v1/learn', learnBody('editor writes a pattern'), bearer(key.secret))).statusCode).toBe(200);
  });

  it('validates name (1-100 chars), role and expires_at', async () => {
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, { name: 'n', role: 'root' }, { name: 'n', max_patterns: -1 },
      { name: 'n', expires_at: 'tomorrow' }, { name: 'n', expires_at: new Date(clock.now().getTime() - 1000).toISOString() }, { name: 'n', extra: 1 }]) {
      const res = await create(owner, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().errors.length).toBeGreaterThan(0);
    }
    expect((await create(owner, { name: 'x'.repeat(100) })).statusCode).toBe(201);
  });

  it('enforces the role hierarchy for create, revoke and rotate', async () => {
    const admin = (await create(owner, { name: 'admin', role: 'admin' })).json();
    const editor = (await create(owner, { name: 'editor' })).json();
    const ownerKeyId = (await t.call('GET', '/v1/keys', undefined, bearer(owner))).json().keys.find((k: { role: string }) => k.role === 'owner').key_id;

    const ownerByAdmin = await create(admin.secret, { name: 'x', role: 'owner' });
    expect(ownerByAdmin.statusCode).toBe(403);
    expect(ownerByAdmin.json().detail).toMatch(/admin key cannot create owner keys/);
    expect((await create(admin.secret, { name: 'peer admin', role: 'admin' })).statusCode).toBe(201);
    expect((await create(admin.secret, { name: 'reader', role: 'reader' })).statusCode).toBe(201);

    const byEditor = await create(editor.secret, { name: 'x', role: 'reader' });
    expect(byEditor.statusCode).toBe(403);
    expect(byEditor.json().detail).toContain('"keys:create"');

    expect((await t.call('DELETE', `/v1/keys/${ownerKeyId}`, undefined, bearer(admin.secret))).statusCode).toBe(403);
    expect((await t.call('POST', `/v1/keys/${ownerKeyId}/rotate`, undefined, bearer(admin.secret))).statusCode).toBe(403);
    expect((await t.call('GET', '/v1/keys', undefined, bearer(owner))).statusCode).toBe(200);
  });

  it('rotation keeps the key id: new secret and prefix work, the old secret is refused at once by every server process', async () => {
    const old = (await create(owner, { name: 'rotating', role: 'reader', max_patterns: 7 })).json();
    expect((await other.call('GET', '/v1/metrics', undefined, bearer(old.secret))).statusCode).toBe(200);

    const res = await t.call('POST', `/v1/keys/${old.key_id}/rotate`, undefined, bearer(owner));
    expect(res.statusCode).toBe(200);
    const rotated = res.json();
    expect(rotated).toMatchObject({ key_id: old.key_id, name: 'rotating', role: 'reader', max_patterns: 7, status: 'active' });
    expect(rotated.secret).toMatch(API_KEY_FORMAT);
    expect(rotated.secret).not.toBe(old.secret);
    expect(rotated.prefix).toBe(rotated.secret.slice(0, 12));
    expect(rotated.prefix).not.toBe(old.prefix);
    const listed = (await t.call('GET', '/v1/keys', undefined, bearer(owner))).json();
    expect(listed.keys.filter((k: { key_id: string }) => k.key_id === old.key_id)).toEqual([
      expect.objectContaining({ prefix: rotated.prefix, status: 'active' }),
    ]);

    for (const server of [t, other]) {
      const refused = await server.call('GET', '/v1/metrics', undefined, bearer(old.secret));
      expect(refused.statusCode).toBe(401);
      expect(refused.json().detail).toBe('invalid API key');
      expect((await server.call('GET', '/v1/metrics', undefined, bearer(rotated.secret))).statusCode).toBe(200);
    }
    // Rotating again works on the same id; a revoked key cannot be rotated.
    const again = (await t.call('POST', `/v1/keys/${old.key_id}/rotate`, undefined, bearer(owner))).json();
    expect(again.key_id).toBe(old.key_id);
    expect((await t.call('GET', '/v1/metrics', undefined, bearer(rotated.secret))).statusCode).toBe(401);
    expect((await t.call('DELETE', `/v1/keys/${old.key_id}`, undefined, bearer(owner))).statusCode).toBe(200);
    expect((await t.call('POST', `/v1/keys/${old.key_id}/rotate`, undefined, bearer(owner))).statusCode).toBe(409);
  });

  it('revocation is immediate everywhere, a second one is 409, and 404/422 for unknown or malformed ids', async () => {
    const key = (await create(owner, { name: 'to revoke' })).json();
    expect((await other.call('GET', '/v1/health', undefined, bearer(key.secret))).statusCode).toBe(200);

    const res = await t.call('DELETE', `/v1/keys/${key.key_id}`, undefined, bearer(owner));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ key_id: key.key_id, status: 'revoked', revoked_at: expect.any(String) });
    expect((await other.call('GET', '/v1/health', undefined, bearer(key.secret))).statusCode).toBe(401);
    expect((await t.call('GET', '/v1/health', undefined, bearer(key.secret))).statusCode).toBe(401);

    const twice = await t.call('DELETE', `/v1/keys/${key.key_id}`, undefined, bearer(owner));
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toMatchObject({ detail: expect.stringMatching(/already revoked/) });
    expect((await t.call('DELETE', `/v1/keys/${randomUUID()}`, undefined, bearer(owner))).statusCode).toBe(404);
    expect((await t.call('DELETE', '/v1/keys/not-a-uuid', undefined, bearer(owner))).statusCode).toBe(422);

    const audit = await t.app.deps.storage.audit.list({ limit: 50 });
    const kinds = audit.map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['KEY_CREATED', 'KEY_REVOKED', 'KEY_ROTATED', 'AUTH_FAILED']));
    expect(audit.filter((e) => e.kind === 'KEY_REVOKED' && e.detail.key_id === key.key_id)).toHaveLength(1);
    expect(audit.find((e) => e.kind === 'AUTH_FAILED' && e.detail.reason === 'API key revoked')).toBeDefined();
    expect(JSON.stringify(audit)).not.toContain(key.secret);
  });

  it('an expired key is refused with 401 and cannot be rotated', async () => {
    const expiresAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const key = (await create(owner, { name: 'short lived', expires_at: expiresAt })).json();
    expect(key.expires_at).toBe(expiresAt);
    expect((await t.call('GET', '/v1/metrics', undefined, bearer(key.secret))).statusCode).toBe(200);

    clock.advance(3_600_000);
    const res = await t.call('GET', '/v1/metrics', undefined, bearer(key.secret));
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe('API key expired');
    expect((await t.call('POST', `/v1/keys/${key.key_id}/rotate`, undefined, bearer(owner))).statusCode).toBe(409);
    const listed = (await t.call('GET', '/v1/keys', undefined, bearer(owner))).json().keys.find((k: { key_id: string }) => k.key_id === key.key_id);
    expect(listed.status).toBe('expired');
  });

  it('binds a key to its project: X-Project-Id naming another project → 403', async () => {
    expect((await t.call('GET', '/v1/metrics', undefined, { ...bearer(owner), 'x-project-id': 'default' })).statusCode).toBe(200);
    const res = await t.call('GET', '/v1/metrics', undefined, { ...bearer(owner), 'x-project-id': 'elsewhere' });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toMatch(/bound to project default/);
  });

  it('(+) owners create keys for another project of their tenant; admins may not', async () => {
    const admin = (await create(owner, { name: 'admin 2', role: 'admin' })).json();
    expect((await create(admin.secret, { name: 'x', project_id: 'beta' })).statusCode).toBe(403);
    const beta = (await create(owner, { name: 'beta editor', project_id: 'beta' })).json();
    expect(beta.project_id).toBe('beta');
    expect((await t.call('POST', '/v1/learn', learnBody('a beta pattern'), bearer(beta.secret))).statusCode).toBe(200);
    expect((await t.call('GET', '/v1/metrics', undefined, bearer(beta.secret))).json().pattern_count).toBe(1);
    // The default project's listing does not show it; beta's admin would.
    const listed = (await t.call('GET', '/v1/keys', undefined, bearer(owner))).json().keys.map((k: { key_id: string }) => k.key_id);
    expect(listed).not.toContain(beta.key_id);
  });
});
