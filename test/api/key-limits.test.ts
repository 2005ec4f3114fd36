/**
 * Issue 25 row 4: a key never makes a key that outlives or outgrows it. The matrix: creating
 * keys with admin keys with and without an expiry and with and without max_patterns, the child
 * asking for nothing (inherits), less (kept), or more (422 naming the field); rotation keeps
 * the limits and tightens them to the rotating key's. API keys exist in DB auth mode only (the
 * key endpoints answer 404 in env, dev and OIDC modes), so this runs there, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { BOOTSTRAP_TOKEN, bearer, perFileDatabase, startDbServer, type DbServer } from './db-auth-helpers.js';
import { learnBody, ManualClock } from './helpers.js';

const hasPg = await requirePostgres('key limits');
const database = perFileDatabase('keylimits');

afterAll(async () => {
  await database.drop();
});

interface Issued { key_id: string; secret: string; expires_at: string | null; max_patterns: number | null }

describe.skipIf(!hasPg)('keys never exceed their creator', () => {
  let t: DbServer;
  let owner: string;
  const clock = new ManualClock(new Date('2030-01-01T00:00:00.000Z'));
  const inHours = (h: number) => new Date(clock.now().getTime() + h * 3_600_000).toISOString();

  beforeAll(async () => {
    t = await startDbServer((await database.schema()).url, {}, { clock });
    owner = (await t.call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN })).json().secret;
  });
  afterAll(async () => {
    await t?.close();
  });

  const create = async (secret: string, body: Record<string, unknown>) => t.call('POST', '/v1/keys', { name: 'k', ...body }, bearer(secret));
  const issued = async (secret: string, body: Record<string, unknown>): Promise<Issued> => {
    const res = await create(secret, body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  const refusedNaming = async (secret: string, body: Record<string, unknown>, field: string) => {
    const res = await create(secret, body);
    expect(res.statusCode, JSON.stringify(body)).toBe(422);
    expect(res.json().errors).toEqual([expect.objectContaining({ path: field })]);
    expect(res.json().detail).toContain(field);
  };

  it('matrix: an admin key with or without expires_at and max_patterns, the child asking nothing, less or more', async () => {
    const expiry = inHours(2);
    const admins = {
      none: await issued(owner, { role: 'admin' }),
      expiring: await issued(owner, { role: 'admin', expires_at: expiry }),
      quota: await issued(owner, { role: 'admin', max_patterns: 3 }),
      both: await issued(owner, { role: 'admin', expires_at: expiry, max_patterns: 3 }),
    };
    const keysBefore = (await t.call('GET', '/v1/keys', undefined, bearer(owner))).json().count;

    for (const [kind, admin] of Object.entries(admins)) {
      const limitedExpiry = admin.expires_at !== null;
      const limitedQuota = admin.max_patterns !== null;
      // Asking nothing: the creator's limits are inherited (none when it has none).
      const inherited = await issued(admin.secret, { role: 'editor' });
      expect(inherited, kind).toMatchObject({ expires_at: admin.expires_at, max_patterns: admin.max_patterns });
      // Asking for less: kept as asked.
      const less = await issued(admin.secret, { expires_at: inHours(1), max_patterns: 2 });
      expect(less, kind).toMatchObject({ expires_at: inHours(1), max_patterns: 2 });
      // Exactly the creator's own limits are fine.
      if (limitedExpiry) expect((await create(admin.secret, { expires_at: expiry })).statusCode).toBe(201);
      if (limitedQuota) expect((await create(admin.secret, { max_patterns: 3 })).statusCode).toBe(201);
      // Asking for more: refused naming the field; an unlimited creator may grant anything.
      if (limitedExpiry) await refusedNaming(admin.secret, { expires_at: inHours(3) }, 'expires_at');
      else expect((await create(admin.secret, { expires_at: inHours(3) })).statusCode).toBe(201);
      if (limitedQuota) await refusedNaming(admin.secret, { max_patterns: 4 }, 'max_patterns');
      else expect((await create(admin.secret, { max_patterns: 4 })).statusCode).toBe(201);
      // A peer admin key is held to the same limits.
      if (limitedExpiry) await refusedNaming(admin.secret, { role: 'admin', expires_at: inHours(3), max_patterns: 1 }, 'expires_at');
    }
    // Refusals stored nothing: 4 admins × (inherited, less), 4 at exactly the creator's limit
    // (expiring 1, quota 1, both 2), 4 "more" of a kind the creator has no limit of (none 2,
    // expiring 1, quota 1).
    const keysAfter = (await t.call('GET', '/v1/keys', undefined, bearer(owner))).json().count;
    expect(keysAfter - keysBefore).toBe(4 * 2 + 4 + 4);
  });

  it('a child of an expiring key stops working when its creator expires', async () => {
    const admin = await issued(owner, { role: 'admin', expires_at: inHours(1) });
    const child = await issued(admin.secret, { role: 'admin', name: 'child of an expiring key' });
    expect(child.expires_at).toBe(admin.expires_at);
    expect((await t.call('GET', '/v1/metrics', undefined, bearer(child.secret))).statusCode).toBe(200);
    clock.advance(3_600_000);
    for (const secret of [admin.secret, child.secret]) {
      const res = await t.call('GET', '/v1/metrics', undefined, bearer(secret));
      expect(res.statusCode).toBe(401);
      expect(res.json().detail).toBe('API key expired');
    }
  });

  it('a child of a key with max_patterns 0 cannot learn', async () => {
    const capped = await issued(owner, { role: 'admin', max_patterns: 0 });
    await refusedNaming(capped.secret, { role: 'editor', max_patterns: 10 }, 'max_patterns');
    const child = await issued(capped.secret, { role: 'editor' });
    expect(child.max_patterns).toBe(0);
    const res = await t.call('POST', '/v1/learn', learnBody('a pattern beyond the creator quota'), bearer(child.secret));
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ error: 'quota_exceeded', metric: 'patterns', limit: 0 });
  });

  it('rotation keeps a key\'s limits and tightens them to the rotating key\'s', async () => {
    // An unlimited key rotated by the owner keeps its (absent) limits; a limited one keeps its own.
    const limited = await issued(owner, { role: 'editor', expires_at: inHours(5), max_patterns: 9 });
    const byOwner = (await t.call('POST', `/v1/keys/${limited.key_id}/rotate`, undefined, bearer(owner))).json();
    expect(byOwner).toMatchObject({ key_id: limited.key_id, expires_at: inHours(5), max_patterns: 9 });

    // A limited admin rotating an unlimited editor gets its new secret: the key now lives no
    // longer, and holds no more, than that admin.
    const admin = await issued(owner, { role: 'admin', expires_at: inHours(2), max_patterns: 4 });
    const unlimited = await issued(owner, { role: 'editor' });
    const res = await t.call('POST', `/v1/keys/${unlimited.key_id}/rotate`, undefined, bearer(admin.secret));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ key_id: unlimited.key_id, expires_at: inHours(2), max_patterns: 4 });
    // The tighter of both, field by field.
    const mixed = await issued(owner, { role: 'editor', expires_at: inHours(1), max_patterns: 50 });
    const rotated = (await t.call('POST', `/v1/keys/${mixed.key_id}/rotate`, undefined, bearer(admin.secret))).json();
    expect(rotated).toMatchObject({ expires_at: inHours(1), max_patterns: 4 });
    const listed = (await t.call('GET', '/v1/keys', undefined, bearer(owner))).json().keys.find((k: Issued) => k.key_id === mixed.key_id);
    expect(listed).toMatchObject({ expires_at: inHours(1), max_patterns: 4 });
  });
});
