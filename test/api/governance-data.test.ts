/**
 * Governance over HTTP on both storages: the NDJSON export (read line by line from a large
 * store through the typed client), classification round trips through recall and export
 * filters, and the three deletions with their permission and tenant rules, dry run and
 * `Prefer: respond-async`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { GovernanceClient, ServiceClient } from '../../src/client/index.js';
import { NdjsonExportRecord } from '../../src/contracts/governance.js';
import type { PatternRecord } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { createMigratedSchema, createTestDatabase, pgConfig, requirePostgres, type TestDatabase } from '../support/pg.js';
import { makeCase, makeRun } from '../contract/storage.contract.evaluation-runs.js';
import { startGovServer, type GovServer } from './governance.helpers.js';
import { learnBody, ManualClock } from './helpers.js';

const ADMIN = 'db.admin.acme.web';
const EDITOR = 'db.editor.acme.web';
const OWNER = 'db.owner.acme.web';
const GLOBEX_OWNER = 'db.owner.globex.web';
const LARGE = 1_200;

function stored(i: number, classification: PatternRecord['classification']): PatternRecord {
  const at = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
  return {
    id: `bulk${String(i).padStart(8, '0')}`, task: `bulk task ${i}`, code: `print(${i})`, output: null, eval_score: 6,
    success_score: 6, reuse_count: 0, run_id: null, classification, source: 'import', author: null, expires_at: null,
    redacted: false, created_at: at, updated_at: at, last_aged_at: null,
  };
}

function governanceSuite(name: string, makeStorage?: () => Promise<Storage>): void {
  describe(`governance data over ${name} storage`, () => {
    const clock = new ManualClock(new Date('2025-06-01T00:00:00.000Z'));
    let t: GovServer;

    const learn = async (token: string, task: string) => {
      const res = await t.call('POST', '/v1/learn', token, learnBody(task));
      expect(res.statusCode, res.body).toBe(200);
      return res.json().pattern_key as string;
    };
    const audits = (kind: string) => t.app.deps.storage.audit.list({ kind, limit: 100 });

    beforeAll(async () => {
      t = await startGovServer(clock, makeStorage ? { storage: await makeStorage() } : {});
    });
    afterAll(async () => {
      await t?.close();
    });

    it('streams a large store as NDJSON, read line by line through the client', async () => {
      const scope = { tenant_id: 'acme', project_id: 'bulk' };
      const dim = t.app.deps.embedder.info.dimension;
      const classes = ['public', 'internal', 'confidential'] as const;
      for (let start = 0; start < LARGE; start += 200) {
        await Promise.all(Array.from({ length: 200 }, (_, j) => {
          const i = start + j;
          const v = Float32Array.from({ length: dim }, (_, d) => Math.cos(i * 0.37 + d));
          return t.app.deps.storage.patterns.insert(scope, stored(i, classes[i % 3]), v);
        }));
      }
      // An evaluation run goes last (docs/behavior.md "Evaluation runs"); the client's
      // exportNdjson() yields only the pattern records.
      await t.app.deps.storage.evaluationRuns.putRuns(scope, [makeRun(1)]);
      await t.app.deps.storage.evaluationRuns.putCase(scope, makeRun(1).id, makeCase('only'));
      const raw = await t.call('GET', '/v1/governance/export', 'db.admin.acme.bulk');
      expect(raw.statusCode).toBe(200);
      expect(JSON.parse(raw.body.trim().split('\n').at(-1) ?? '')).toMatchObject({ type: 'evaluation_run', run: { id: makeRun(1).id }, cases: [{ case_id: 'only' }] });
      expect(raw.headers['content-type']).toMatch(/^application\/x-ndjson/);
      expect(raw.headers['content-disposition']).toMatch(/^attachment; filename="export-acme-bulk-\d{4}-\d{2}-\d{2}\.ndjson"$/);

      const url = await t.server.listen({ port: 0, host: '127.0.0.1' });
      const client = new ServiceClient({ url, apiKey: 'db.admin.acme.bulk' });
      try {
        const gov = new GovernanceClient(client);
        let n = 0;
        let previous = '';
        for await (const record of gov.exportNdjson()) {
          expect(record.key > previous).toBe(true);
          previous = record.key;
          expect(record).toMatchObject({ tenant_id: 'acme', project_id: 'bulk', task: `bulk task ${n}` });
          n++;
        }
        expect(n).toBe(LARGE);
        let confidential = 0;
        for await (const record of gov.exportNdjson({ classifications: ['confidential', 'public'] })) {
          expect(record.classification).not.toBe('internal');
          confidential++;
        }
        expect(confidential).toBe(LARGE - Math.ceil((LARGE - 1) / 3));
      } finally {
        await client.close();
      }
      const exported = (await audits('DATA_EXPORTED')).filter((e) => e.project_id === 'bulk');
      expect(exported[0].detail).toMatchObject({ format: 'ndjson', count: expect.any(Number), complete: true });
    });

    it('answers 422 for an unknown classification and 403 without the export permission', async () => {
      const res = await t.call('GET', '/v1/governance/export?classification=public,secret', ADMIN);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toContain('"secret"');
      expect((await t.call('GET', '/v1/governance/export', EDITOR)).statusCode).toBe(403);
    });

    it('a classification round trip is seen at once by recall and export filters', async () => {
      const task = 'Rotate the database credentials stored in the vault every thirty days';
      const key = await learn(EDITOR, task);
      const recall = async (classification: string) =>
        (await t.call('POST', '/v1/recall', EDITOR, { task, classification, readonly: true })).json().matches.map((m: { pattern_key: string }) => m.pattern_key);
      expect(await recall('confidential')).toEqual([]);
      expect(await recall('internal')).toContain(key);

      const res = await t.call('PUT', `/v1/governance/patterns/${encodeURIComponent(key)}/classify`, ADMIN, { classification: 'confidential' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ key, task, classification: 'confidential' });
      expect(await recall('confidential')).toContain(key);
      expect(await recall('internal')).not.toContain(key);
      const lines = (await t.call('GET', '/v1/governance/export?classification=confidential', ADMIN)).body.trim().split('\n');
      expect(lines.map((l) => NdjsonExportRecord.parse(JSON.parse(l)).key)).toContain(key);
      expect((await audits('PATTERN_CLASSIFIED'))[0].detail).toEqual({ pattern_key: key, from: 'internal', to: 'confidential' });

      expect((await t.call('PUT', `/v1/governance/patterns/${encodeURIComponent(key)}/classify`, ADMIN, { classification: 'secret' })).statusCode).toBe(422);
      expect((await t.call('PUT', `/v1/governance/patterns/${encodeURIComponent('patterns/nothere0')}/classify`, ADMIN, { classification: 'public' })).statusCode).toBe(404);
      expect((await t.call('PUT', `/v1/governance/patterns/${encodeURIComponent(key)}/classify`, EDITOR, { classification: 'public' })).statusCode).toBe(403);
    });

    it('delete-scope with dry_run counts and deletes nothing; without it the scope is gone', async () => {
      const token = 'db.admin.acme.scoped';
      await learn('db.editor.acme.scoped', 'Compress nightly log archives with zstd before upload');
      const dry = await t.call('POST', '/v1/governance/delete-scope?dry_run=true', token, {});
      expect(dry.statusCode, dry.body).toBe(200);
      expect(dry.json()).toEqual({ tenant_id: 'acme', project_id: 'scoped', patterns_deleted: 1, jobs_deleted: 0, keys_revoked: 0, projects_deleted: 1, dry_run: true });
      expect((await t.call('GET', '/v1/metrics', token)).json().pattern_count).toBe(1);
      const real = await t.call('POST', '/v1/governance/delete-scope', token);
      expect(real.json()).toMatchObject({ patterns_deleted: 1, projects_deleted: 1, dry_run: false });
      expect((await t.call('GET', '/v1/metrics', token)).json()).toMatchObject({ pattern_count: 0, runs: 0 });
      const audit = (await audits('SCOPE_DELETED'))[0];
      expect(audit).toMatchObject({ tenant_id: 'acme', project_id: 'scoped', actor: token, detail: { patterns_deleted: 1, kind: 'scope' } });
    });

    it('project deletion: own project or (owner) any of the tenant; never another tenant', async () => {
      await learn('db.editor.acme.doomed', 'Generate a sitemap from the routes of a web app');
      await learn('db.editor.globex.doomed', 'Generate a sitemap from the routes of a web app');
      const refused = await t.call('DELETE', '/v1/governance/projects/doomed', ADMIN);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().detail).toContain('bound to project web');
      const res = await t.call('DELETE', '/v1/governance/projects/doomed', OWNER);
      expect(res.json()).toEqual({ tenant_id: 'acme', project_id: 'doomed', patterns_deleted: 1, jobs_deleted: 0, keys_revoked: 0, projects_deleted: 1, dry_run: false });
      expect((await t.call('GET', '/v1/metrics', 'db.admin.globex.doomed')).json().pattern_count).toBe(1);
      expect((await t.call('GET', '/v1/metrics', 'db.admin.acme.web')).json().pattern_count).toBeGreaterThan(0);
    });

    it('tenant deletion: owner only, own tenant only; every project goes, the other tenant stays', async () => {
      expect((await t.call('DELETE', '/v1/governance/tenants/globex', ADMIN)).statusCode).toBe(403);
      const other = await t.call('DELETE', '/v1/governance/tenants/acme', GLOBEX_OWNER);
      expect(other.statusCode).toBe(403);
      expect(other.json().detail).toContain('own tenant');
      const res = await t.call('DELETE', '/v1/governance/tenants/globex', GLOBEX_OWNER);
      expect(res.json()).toMatchObject({ tenant_id: 'globex', project_id: '*', patterns_deleted: 1, projects_deleted: 1 });
      expect((await t.call('GET', '/v1/metrics', 'db.admin.globex.doomed')).json().pattern_count).toBe(0);
      expect((await t.call('GET', '/v1/metrics', ADMIN)).json().pattern_count).toBeGreaterThan(0);
      expect((await audits('TENANT_DELETED'))[0].detail).toMatchObject({ tenant_id: 'globex', patterns_deleted: 1 });
    });

    it('Prefer: respond-async queues the deletion; the job keeps itself and answers the result', async () => {
      const token = 'db.admin.acme.later';
      await learn('db.editor.acme.later', 'Send a weekly digest email of new support tickets');
      const res = await t.call('POST', '/v1/governance/delete-scope', token, undefined, { prefer: 'respond-async' });
      expect(res.statusCode, res.body).toBe(202);
      const id = res.json().job_id as string;
      let job;
      for (let i = 0; i < 500; i++) {
        job = (await t.call('GET', `/v1/jobs/${id}`, token)).json();
        if (job.status === 'completed' || job.status === 'failed') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(job).toMatchObject({ status: 'completed', operation: 'governance_delete', result: { patterns_deleted: 1, project_id: 'later' } });
      expect((await t.call('GET', '/v1/metrics', token)).json().pattern_count).toBe(0);
    });
  });
}

governanceSuite('JSON');

const hasPg = await requirePostgres('governance data API on PostgreSQL');
let database: Promise<TestDatabase> | null = null;
afterAll(async () => {
  if (database) await (await database).drop();
});
if (hasPg) {
  governanceSuite('PostgreSQL', async () => {
    database ??= createTestDatabase('governance_api');
    const schema = await createMigratedSchema(await database);
    return createPostgresStorage(pgConfig(schema.url));
  });
}
