/**
 * Browsing the stored patterns by role, on both storages (docs/behavior.md "Auth and scope"):
 * a reader lists, reads and exports (GET /v1/patterns/export, one streamed request) only what
 * is not `confidential`; editors and up browse everything; recall is unchanged. The export of
 * more than 100 patterns runs at the default rate limits (60 requests a minute per IP).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../server/app.js';
import { createApp, type App } from '../../src/app.js';
import { requirePostgres } from '../support/pg.js';
import { bearer, perFileDatabase, provisionKey, startDbServer, type DbServer } from './db-auth-helpers.js';
import { testConfig } from './helpers.js';

const hasPg = await requirePostgres('pattern browsing by role');
const database = perFileDatabase('patbrowse');

const CLASSES = ['public', 'internal', 'confidential'] as const;
const WORDS = ['parse', 'dates', 'send', 'mail', 'resize', 'images', 'rotate', 'logs', 'merge', 'csv', 'hash', 'files', 'zip', 'folders'];
/** 132 patterns, a third of each classification; distinct tasks (no near-identical merge). */
const RECORDS = Array.from({ length: 132 }, (_, n) => ({
  key: `patterns/browse${String(n).padStart(4, '0')}`,
  task: `browse task ${n}: ${WORDS[n % 14]} ${WORDS[(n * 5 + 3) % 14]} ${WORDS[(n * 3 + 1) % 14]} number ${n * 7919}`,
  code: `run(${n})`,
  eval_score: n % 10,
  classification: CLASSES[n % 3],
  source: n % 2 ? 'cli' : 'api',
}));
const CONFIDENTIAL = RECORDS.filter((r) => r.classification === 'confidential');
const VISIBLE = RECORDS.filter((r) => r.classification !== 'confidential');

type Role = 'reader' | 'owner';
type Call = (role: Role, method: 'GET' | 'POST', url: string, body?: unknown) => Promise<LightMyRequestResponse>;

const inject = (server: FastifyInstance, method: 'GET' | 'POST', url: string, body: unknown, headers: Record<string, string>) =>
  server.inject({
    method, url, payload: body === undefined ? undefined : JSON.stringify(body),
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
  });

/**
 * JSON storage has no keys with roles: the owner's view is a dev-mode server, the reader's an
 * env-mode server with SERVICE_ENV_AUTH_ROLE=reader, one at a time over the same data folder.
 * Rate limits are the defaults.
 */
async function jsonSetup(): Promise<{ call: Call; close(): Promise<void> }> {
  const dataPath = await mkdtemp(join(tmpdir(), 'svc-browse-'));
  const KEY = 'reader-key-for-browse-tests-0123456789';
  const env = { reader: { SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: KEY, SERVICE_ENV_AUTH_ROLE: 'reader' }, owner: {} };
  let open: { role: Role; app: App; server: FastifyInstance } | null = null;
  const shut = async () => {
    if (!open) return;
    await open.server.close();
    await open.app.close();
    open = null;
  };
  return {
    async call(role, method, url, body) {
      if (open?.role !== role) {
        await shut();
        const app = await createApp(testConfig(dataPath, env[role]));
        open = { role, app, server: await buildServer(app, { checkResponses: true }) };
      }
      return inject(open.server, method, url, body, role === 'reader' ? bearer(KEY) : {});
    },
    async close() {
      await shut();
      await rm(dataPath, { recursive: true, force: true });
    },
  };
}

/** PostgreSQL in DB auth mode: one reader and one owner key of the same project, default rate limits. */
async function pgSetup(): Promise<{ call: Call; close(): Promise<void> }> {
  const t: DbServer = await startDbServer((await database.schema()).url, {
    SERVICE_RATE_LIMIT_DEFAULT: '60', SERVICE_RATE_LIMIT_EXPENSIVE: '10', SERVICE_RATE_LIMIT_PER_KEY: '120',
  });
  const keys = {
    reader: await provisionKey(t.keyStore, { tenant_id: 'default', project_id: 'default', role: 'reader' }),
    owner: await provisionKey(t.keyStore, { tenant_id: 'default', project_id: 'default', role: 'owner' }),
  };
  return {
    call: (role, method, url, body) => inject(t.server, method, url, body, bearer(keys[role].secret)),
    close: () => t.close(),
  };
}

const keysOf = (lines: { key: string }[]) => lines.map((l) => l.key).sort();
const ndjson = (res: LightMyRequestResponse) => {
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
  return res.body.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { key: string; classification: string; code: string; project_id: string });
};

for (const storage of ['json', 'postgres'] as const) {
  describe.skipIf(storage === 'postgres' && !hasPg)(`browsing patterns by role on ${storage}`, { timeout: 120_000 }, () => {
    let s: { call: Call; close(): Promise<void> };
    beforeAll(async () => {
      s = storage === 'json' ? await jsonSetup() : await pgSetup();
      const imported = await s.call('owner', 'POST', '/v1/import', { records: RECORDS });
      expect(imported.json()).toMatchObject({ imported: RECORDS.length });
    }, 120_000);
    afterAll(async () => {
      await s?.close();
      if (storage === 'postgres') await database.drop();
    });

    // The owner's view first: on JSON the views take turns over one folder.
    it('an owner exports all 132 patterns in one request at the default limits, the filters applied', async () => {
      const all = ndjson(await s.call('owner', 'GET', '/v1/patterns/export'));
      expect(keysOf(all)).toEqual(keysOf(RECORDS));
      expect(all[0]).toMatchObject({ code: expect.stringMatching(/^run\(/), project_id: 'default' });
      const some = ndjson(await s.call('owner', 'GET', '/v1/patterns/export?classification=confidential&source=cli&min_score=5'));
      expect(keysOf(some)).toEqual(keysOf(CONFIDENTIAL.filter((r) => r.source === 'cli' && r.eval_score >= 5)));
      const bad = await s.call('owner', 'GET', '/v1/patterns/export?limit=5');
      expect(bad.statusCode).toBe(422);
      expect(bad.body).toContain('limit');
    });

    it('a reader lists no confidential pattern, not even when it asks for them', async () => {
      const listed: { key: string; classification: string }[] = [];
      let cursor: string | null = null;
      do {
        const res = await s.call('reader', 'GET', `/v1/patterns?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.statusCode, res.body).toBe(200);
        const page = res.json() as { patterns: { key: string; classification: string }[]; next_cursor: string | null };
        listed.push(...page.patterns);
        cursor = page.next_cursor;
      } while (cursor);
      expect(keysOf(listed)).toEqual(keysOf(VISIBLE));
      const asked = await s.call('reader', 'GET', '/v1/patterns?classification=confidential');
      expect(asked.json()).toEqual({ patterns: [], next_cursor: null });
    });

    it("a reader's read of a confidential pattern or its history is a 404, like an absent one; other patterns read as before", async () => {
      const secret = encodeURIComponent(CONFIDENTIAL[0].key);
      for (const path of [`/v1/patterns/${secret}`, `/v1/patterns/${secret}/history`]) {
        const res = await s.call('reader', 'GET', path);
        expect(res.statusCode, path).toBe(404);
        expect(res.json().detail).toBe(`pattern ${CONFIDENTIAL[0].key} not found`);
      }
      const open = await s.call('reader', 'GET', `/v1/patterns/${encodeURIComponent(VISIBLE[0].key)}`);
      expect(open.statusCode).toBe(200);
      expect(open.json().code).toBe(VISIBLE[0].code);
    });

    it("a reader's export is one streamed request holding exactly what it may list, and the admin export stays refused", async () => {
      const lines = ndjson(await s.call('reader', 'GET', '/v1/patterns/export'));
      expect(keysOf(lines)).toEqual(keysOf(VISIBLE));
      expect(lines.some((l) => l.classification === 'confidential')).toBe(false);
      expect(ndjson(await s.call('reader', 'GET', '/v1/patterns/export?classification=confidential'))).toEqual([]);
      const filtered = ndjson(await s.call('reader', 'GET', '/v1/patterns/export?source=api&max_score=3'));
      expect(keysOf(filtered)).toEqual(keysOf(VISIBLE.filter((r) => r.source === 'api' && r.eval_score <= 3)));
      expect((await s.call('reader', 'GET', '/v1/governance/export')).statusCode).toBe(403);
      expect((await s.call('reader', 'GET', '/v1/export')).statusCode).toBe(403);
    });

    it('recall is unchanged: a reader still finds a confidential pattern by its task', async () => {
      const res = await s.call('reader', 'POST', '/v1/recall', { task: CONFIDENTIAL[1].task, readonly: true, limit: 1 });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().matches[0].pattern_key).toBe(CONFIDENTIAL[1].key);
    });
  });
}
