/** API keys in DB auth mode: quotas, governance revocation, audit storage, logs, other modes. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { adminQuery, requirePostgres } from '../support/pg.js';
import { BOOTSTRAP_TOKEN, bearer, perFileDatabase, provisionKey, startDbServer, type DbServer } from './db-auth-helpers.js';
import { learnBody, startServer } from './helpers.js';

const hasPg = await requirePostgres('API key quotas and audit');
const database = perFileDatabase('keys_ops');

afterAll(async () => {
  await database.drop();
});

describe.skipIf(!hasPg)('pattern quota (max_patterns)', () => {
  let t: DbServer;
  let owner: string;
  beforeAll(async () => {
    const schema = await database.schema();
    t = await startDbServer(schema.url);
    owner = (await t.call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN })).json().secret;
  });
  afterAll(async () => {
    await t?.close();
  });

  const nextMonth = () => {
    const now = new Date();
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
  };

  it('answers 429 quota_exceeded on learn and import once the key quota is reached', async () => {
    const key = (await t.call('POST', '/v1/keys', { name: 'quota 2', project_id: 'quota', max_patterns: 2 }, bearer(owner))).json();
    for (const task of ['parse csv files into rows', 'send weekly digest emails']) {
      expect((await t.call('POST', '/v1/learn', learnBody(task), bearer(key.secret))).statusCode).toBe(200);
    }
    const res = await t.call('POST', '/v1/learn', learnBody('resize uploaded images to thumbnails'), bearer(key.secret));
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ error: 'quota_exceeded', metric: 'patterns', current: 2, limit: 2, reset_date: nextMonth() });

    const imported = await t.call('POST', '/v1/import', { records: [{ task: 'compress logs nightly', code: 'gzip', eval_score: 7 }] }, bearer(key.secret));
    expect(imported.statusCode).toBe(429);
    expect(imported.json()).toMatchObject({ error: 'quota_exceeded', metric: 'patterns', current: 2, limit: 2 });
  });

  it('a key without its own quota inherits the project quota', async () => {
    const key = (await t.call('POST', '/v1/keys', { name: 'inherits', project_id: 'capped' }, bearer(owner))).json();
    await adminQuery("UPDATE projects SET max_patterns = 1 WHERE tenant_id = 'default' AND id = 'capped'", [], t.app.deps.config.storage.databaseUrl ?? '');
    expect((await t.call('POST', '/v1/learn', learnBody('first capped pattern'), bearer(key.secret))).statusCode).toBe(200);
    const res = await t.call('POST', '/v1/learn', learnBody('rotate the database credentials monthly'), bearer(key.secret));
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ current: 1, limit: 1 });
    // An own quota wins over the project's.
    const roomy = await provisionKey(t.keyStore, { tenant_id: 'default', project_id: 'capped', role: 'editor', max_patterns: 5 });
    expect((await t.call('POST', '/v1/learn', learnBody('archive finished projects'), bearer(roomy.secret))).statusCode).toBe(200);
  });
});

describe.skipIf(!hasPg)('KeyRepository.revokeAll (governance deletions)', () => {
  it('revokes the active keys of one project, or of a whole tenant, and nothing else', async () => {
    const t = await startDbServer((await database.schema()).url);
    try {
      const at = new Date().toISOString();
      const keys = {
        web: await provisionKey(t.keyStore, { tenant_id: 'acme', project_id: 'web', role: 'editor' }),
        api: await provisionKey(t.keyStore, { tenant_id: 'acme', project_id: 'api', role: 'editor' }),
        other: await provisionKey(t.keyStore, { tenant_id: 'globex', project_id: 'web', role: 'editor' }),
      };
      const works = async (k: { secret: string }) => (await t.call('GET', '/v1/metrics', undefined, bearer(k.secret))).statusCode === 200;
      expect(await t.keyStore.keys.revokeAll({ tenant_id: 'acme', project_id: 'web' }, at)).toBe(1);
      expect([await works(keys.web), await works(keys.api), await works(keys.other)]).toEqual([false, true, true]);
      expect(await t.keyStore.keys.revokeAll({ tenant_id: 'acme' }, at)).toBe(1);
      expect([await works(keys.api), await works(keys.other)]).toEqual([false, true]);
      expect((await t.keyStore.keys.list({ tenant_id: 'acme', project_id: 'web' }))[0].revoked_at).toBe(at);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!hasPg)('secrets never reach the logs', () => {
  it('keeps the Authorization header, key secrets and the bootstrap token out of every log line', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'trace', json: true, destination: { write: (line: string) => lines.push(line) } });
    const t = await startDbServer((await database.schema()).url, { SERVICE_LOG_LEVEL: 'trace' }, { logger });
    const secrets: string[] = [BOOTSTRAP_TOKEN];
    try {
      const owner = (await t.call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN })).json().secret;
      secrets.push(owner);
      const created = (await t.call('POST', '/v1/keys', { name: 'logged?' }, bearer(owner))).json();
      secrets.push(created.secret);
      const rotated = (await t.call('POST', `/v1/keys/${created.key_id}/rotate`, undefined, bearer(owner))).json();
      secrets.push(rotated.secret);
      const wrong = `svc_${'A'.repeat(43)}`;
      secrets.push(wrong);
      expect((await t.call('GET', '/v1/metrics', undefined, bearer(wrong))).statusCode).toBe(401);
      expect((await t.call('GET', '/v1/metrics', undefined, bearer(created.secret))).statusCode).toBe(401);
      expect((await t.call('POST', '/v1/learn', learnBody('logged task'), bearer(rotated.secret))).statusCode).toBe(200);
      expect((await t.call('GET', '/v1/no-such-route', undefined, bearer(rotated.secret))).statusCode).toBe(404);
    } finally {
      await t.close();
    }
    const text = lines.join('');
    // The capture works: requests and the startup reminder were logged.
    expect(text).toContain('request completed');
    expect(text).toContain('SERVICE_BOOTSTRAP_TOKEN is set');
    // Security events are log lines too (auth failures, key creation and rotation).
    const auditKinds = lines.map((l) => JSON.parse(l) as { msg?: string; audit?: { kind: string } })
      .filter((l) => l.msg === 'audit').map((l) => l.audit?.kind);
    expect(auditKinds).toEqual(expect.arrayContaining(['KEY_CREATED', 'KEY_ROTATED', 'AUTH_FAILED']));
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/Bearer/i);
    expect(text).not.toContain('svc_');
  });
});

describe.skipIf(!hasPg)('DB auth mode over JSON pattern storage', () => {
  it('keeps keys and the audit log in PostgreSQL', async () => {
    const schema = await database.schema();
    const dataPath = await mkdtemp(join(tmpdir(), 'svc-keys-json-'));
    const t = await startDbServer(schema.url, { SERVICE_STORAGE: 'json', SERVICE_DATA_PATH: dataPath });
    try {
      expect(t.app.deps.storage.kind).toBe('json');
      const owner = (await t.call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN })).json().secret;
      expect((await t.call('POST', '/v1/learn', learnBody('json stored, pg audited'), bearer(owner))).statusCode).toBe(200);
      expect((await t.call('GET', '/v1/export', undefined, bearer(owner))).statusCode).toBe(200);
      const rows = await adminQuery(`SELECT kind FROM "${schema.schema}".audit_log ORDER BY id`, [], schema.url);
      expect(rows.rows.map((r: { kind: string }) => r.kind)).toEqual(['KEY_CREATED', 'DATA_EXPORTED']);
    } finally {
      await t.close();
      await rm(dataPath, { recursive: true, force: true });
    }
  });
});

describe('keys endpoints outside DB auth mode', () => {
  it('answer 404 {detail} naming DB auth mode (after the usual permission check)', async () => {
    const t = await startServer({ SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: 'static-env-key-0123456789' });
    try {
      const res = await t.call('POST', '/v1/keys', { name: 'x' }, bearer('static-env-key-0123456789'));
      expect(res.statusCode).toBe(404);
      expect(res.json().detail).toMatch(/DB auth mode.*env auth/);
      expect((await t.call('GET', '/v1/keys')).statusCode).toBe(401);
      const boot = await t.call('POST', '/v1/keys/bootstrap', { token: BOOTSTRAP_TOKEN });
      expect(boot.statusCode).toBe(404);
      expect(boot.json().detail).toMatch(/DB auth mode/);
    } finally {
      await t.close();
    }
  });
});
