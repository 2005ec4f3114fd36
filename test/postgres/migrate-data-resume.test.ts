/**
 * Issue 25, 7: `service migrate-data --from json --to postgres` (the one direction the command
 * offers) killed with SIGKILL at several points and run again ends with a target equal to the
 * source: every pattern with all its eval observations and skills, the feedback clusters and
 * the run counters (GET /v1/metrics). Real child processes on a real JSON data path.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder } from '../../src/adapters/embeddings/index.js';
import { createJsonStorage } from '../../src/adapters/storage/json/index.js';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { loadConfig } from '../../src/config/index.js';
import type { PatternRecord, Scope } from '../../src/core/types.js';
import { noopInstruments, silentLogger } from '../../src/ports/observability.js';
import type { Storage } from '../../src/ports/storage.js';
import { BIN, runCli } from '../support/cli.js';
import { childEnv, TEST_MODEL_PATH } from '../support/env.js';
import { adminQuery, createMigratedSchema, createTestDatabase, pgConfig, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';

const hasPg = await requirePostgres('migrate-data resume');
const built = existsSync(join(BIN, '..', '..', 'dist', 'commands', 'main.js'));
if (!built) {
  if (process.env.CI && process.env.CI !== 'false') throw new Error('dist/ is missing: `npm test` builds it first');
  console.warn('\n[skip] migrate-data resume: run `npm run build` first (the test spawns bin/service.js).\n');
}

const A: Scope = { tenant_id: 'default', project_id: 'default' };
const B: Scope = { tenant_id: 'acme', project_id: 'search-team' };
/** Fifteen batches of 64: enough steps for the copy to be caught at each kill point. */
const PATTERNS = 960;
const KILL_AT = [64, 400, 800];

function record(i: number): PatternRecord {
  const at = new Date(Date.UTC(2025, 3, 1, 10, 0, 0, i * 10)).toISOString();
  return {
    id: `r${String(i).padStart(6, '0')}`, task: `Convert report ${i} of the quarterly series into a chart`, code: `chart(${i})`,
    output: null, eval_score: 5 + (i % 5), success_score: 5 + (i % 5), reuse_count: i % 4, run_id: `run-${i}`,
    classification: 'internal', source: 'api', author: null, expires_at: null, redacted: false,
    created_at: at, updated_at: at, last_aged_at: null,
  };
}

async function dump(storage: Storage, scope: Scope) {
  const patterns: PatternRecord[] = [];
  for await (const p of storage.patterns.iterate(scope)) patterns.push(p);
  patterns.sort((a, b) => (a.id < b.id ? -1 : 1));
  const ids = patterns.map((p) => p.id);
  const skills = await Promise.all(ids.map((id) => storage.skills.get(scope, id)));
  const evals = await storage.evals.recent(scope, ids, 50);
  return {
    patterns,
    evals: ids.map((id) => evals.get(id) ?? []),
    skills,
    feedback: await storage.feedback.list(scope),
    metrics: await storage.metrics.get(scope),
  };
}

describe.skipIf(!hasPg || !built)('migrate-data killed and run again (issue 25, 7)', () => {
  let db: TestDatabase;
  let dataPath: string;
  const env = (target: TestSchema) => ({ SERVICE_DATABASE_URL: target.url, SERVICE_LOG_LEVEL: 'error' });
  const args = () => ['migrate-data', '--from', 'json', '--to', 'postgres', '--data-path', dataPath, '--json'];

  beforeAll(async () => {
    db = await createTestDatabase('migrate_resume');
    dataPath = await mkdtemp(join(tmpdir(), 'svc-migrate-resume-'));
    const embedder = await createEmbedder(
      loadConfig({ SERVICE_LOCAL_EMBEDDINGS: '1', SERVICE_EMBEDDING_MODEL_PATH: TEST_MODEL_PATH, SERVICE_LLM_PROVIDER: 'none' }),
      { logger: silentLogger, instruments: noopInstruments },
    );
    const json = await createJsonStorage({ dataPath });
    try {
      const records = Array.from({ length: PATTERNS }, (_, i) => record(i));
      const vectors = await embedder.embed(records.map((r) => r.task));
      for (const [i, r] of records.entries()) {
        const scope = i % 2 ? B : A;
        await json.patterns.insert(scope, r, vectors[i]);
        for (const [k, score] of [4, 6, 8, i % 10].entries()) await json.evals.add(scope, r.id, score, new Date(Date.parse(r.created_at) + k).toISOString());
        if (i % 3 === 0) await json.skills.set(scope, r.id, ['charts', `series-${i % 7}`]);
      }
      for (const [scope, runs] of [[A, 7], [B, 3]] as const) {
        for (let k = 0; k < runs; k++) await json.metrics.recordRun(scope, k + 2);
        for (let k = 0; k < runs + 2; k++) await json.metrics.recordRecall(scope, k % 2 === 0);
      }
      await json.feedback.upsert(A, [{ id: 'fb1', text: 'label the axes', count: 2, score: 0.5, last_seen: '2025-04-02T00:00:00.000Z', last_decayed_at: null, tasks: [record(0).task] }]);
      await json.meta.setEmbeddingInfo({ ...embedder.info });
    } finally {
      await json.close();
      await embedder.close?.();
    }
  }, 180_000);

  afterAll(async () => {
    if (dataPath) await rm(dataPath, { recursive: true, force: true });
    await db?.drop();
  });

  async function expectTargetEqualsSource(target: TestSchema): Promise<void> {
    const json = await createJsonStorage({ dataPath });
    const pgStore = await createPostgresStorage(pgConfig(target.url));
    try {
      for (const scope of [A, B]) {
        const [want, got] = [await dump(json, scope), await dump(pgStore, scope)];
        expect(got.patterns.length).toBe(PATTERNS / 2);
        expect(got.evals).toEqual(want.evals);
        expect(got.skills).toEqual(want.skills);
        expect(got.metrics).toEqual(want.metrics);
        expect(got).toEqual(want);
      }
    } finally {
      await json.close();
      await pgStore.close();
    }
  }

  it(`SIGKILL once ${KILL_AT.join(', ')} patterns are in the target, then a rerun: the target equals the source`, async () => {
    const target = await createMigratedSchema(db, 'killed');
    const watcher = new pg.Client({ connectionString: db.url });
    await watcher.connect();
    const count = async () => Number((await watcher.query(`SELECT count(*) AS n FROM "${target.schema}".patterns`)).rows[0].n);
    try {
      for (const at of KILL_AT) {
        const child = spawn(process.execPath, [BIN, ...args()], { env: childEnv(env(target)), stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
        const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
        let done = false;
        void exited.then(() => (done = true));
        // Poll the target (no fixed sleeps): kill as soon as it holds `at` patterns.
        while (!done && (await count()) < at) await new Promise((resolve) => setTimeout(resolve, 10));
        expect(done, `the copy finished before ${at} patterns were in the target; stderr: ${stderr}`).toBe(false);
        child.kill('SIGKILL');
        await exited;
        expect(child.signalCode).toBe('SIGKILL');
        const held = await count();
        expect(held).toBeGreaterThanOrEqual(at);
        expect(held).toBeLessThan(PATTERNS);
      }
    } finally {
      await watcher.end();
    }
    const rerun = await runCli(args(), { env: env(target) });
    expect(rerun.stderr).toBe('');
    expect(rerun.code).toBe(0);
    await expectTargetEqualsSource(target);
    const report = JSON.parse(rerun.stdout);
    expect(report.patterns + report.skipped).toBe(PATTERNS);
    expect(report.metrics).toBe(2);
  }, 300_000);

  it('a rerun completes patterns an interrupted older copy left without evaluations or skills', async () => {
    const target = await createMigratedSchema(db, 'damaged');
    const first = await runCli(args(), { env: env(target) });
    expect(first.code).toBe(0);
    // What a copy killed between its separate writes used to leave (issue 25, 7): patterns
    // whose newest observations, or all of them, and whose skill tags never arrived.
    await adminQuery(
      `DELETE FROM "${target.schema}".eval_observations e USING (
         SELECT id FROM "${target.schema}".eval_observations WHERE pattern_id IN ('r000000', 'r000003', 'r000010') ORDER BY at DESC LIMIT 5
       ) gone WHERE e.id = gone.id`,
      [], db.url,
    );
    await adminQuery(`DELETE FROM "${target.schema}".eval_observations WHERE pattern_id = 'r000011'`, [], db.url);
    await adminQuery(`DELETE FROM "${target.schema}".pattern_skills WHERE pattern_id IN ('r000006', 'r000009')`, [], db.url);
    await adminQuery(`DELETE FROM "${target.schema}".metrics_counters`, [], db.url);
    const rerun = await runCli(args(), { env: env(target) });
    expect(rerun.code).toBe(0);
    await expectTargetEqualsSource(target);
    const report = JSON.parse(rerun.stdout);
    expect(report).toMatchObject({ patterns: 0, skipped: PATTERNS, skills: 2, completed: 5, evals: 9 });
  }, 300_000);
});
