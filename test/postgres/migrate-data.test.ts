/**
 * `service migrate-data --from json --to postgres` through the real command tree, on a real
 * JSON data path and a real PostgreSQL schema, with the offline embedding model; plus the
 * vector-copying path of copyStorage between two PostgreSQL schemas.
 */
import { makeCase, makeRun, runId } from '../contract/storage.contract.evaluation-runs.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../commands/main.js';
import { createEmbedder } from '../../src/adapters/embeddings/index.js';
import { copyStorage } from '../../src/services/copy-data.js';
import { createJsonStorage } from '../../src/adapters/storage/json/index.js';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { loadConfig } from '../../src/config/index.js';
import type { FeedbackCluster, PatternRecord, Scope } from '../../src/core/types.js';
import type { Embedder } from '../../src/ports/embedder.js';
import { noopInstruments, silentLogger } from '../../src/ports/observability.js';
import type { Storage } from '../../src/ports/storage.js';
import { TEST_MODEL_PATH as MODEL_PATH } from '../support/env.js';
import { fakeIo } from '../support/fake-io.js';
import {
  createMigratedSchema, createTestDatabase, pgConfig, requirePostgres, type TestDatabase, type TestSchema,
} from '../support/pg.js';

const hasPg = await requirePostgres('migrate-data');

const A: Scope = { tenant_id: 'default', project_id: 'default' };
const B: Scope = { tenant_id: 'acme', project_id: 'search-team' };
const TASKS = [
  'parse a CSV file and sum the second column',
  'send an HTTP request with retries and exponential backoff',
  'resize every image in a folder to 200 pixels wide',
  'compute the median of a list of numbers',
  'validate an email address with a regular expression',
];

function record(i: number, task: string): PatternRecord {
  const at = new Date(Date.UTC(2025, 3, 1, 10, 0, i)).toISOString();
  return {
    id: `m${String(i).padStart(6, '0')}`, task, code: `solution_${i}()`, output: i % 2 ? 'ok' : null,
    eval_score: 5 + (i % 5), success_score: 5 + (i % 5), reuse_count: i % 3, run_id: `run-${i}`,
    classification: i % 2 ? 'public' : 'internal', source: 'api', author: null, expires_at: null, redacted: false,
    created_at: at, updated_at: at, last_aged_at: null,
  };
}

const cluster: FeedbackCluster = {
  id: 'fb1', text: 'add error handling for empty input', count: 3, score: 0.7,
  last_seen: '2025-04-02T00:00:00.000Z', last_decayed_at: null, tasks: [TASKS[0]],
};

async function cli(args: string[]) {
  const { io, stdout, stderr } = fakeIo({ env: { noColor: true } });
  const code = await main(['node', 'service', ...args], io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

async function dump(storage: Storage, scope: Scope) {
  const patterns: PatternRecord[] = [];
  for await (const p of storage.patterns.iterate(scope)) patterns.push(p);
  const ids = patterns.map((p) => p.id);
  const skills = await Promise.all(ids.map((id) => storage.skills.get(scope, id)));
  const runs = await storage.evaluationRuns.listRuns(scope, { limit: 100 });
  const cases = await Promise.all(runs.map((r) => storage.evaluationRuns.listCases(scope, r.id)));
  return { patterns, evals: await storage.evals.recent(scope, ids, 50), skills, feedback: await storage.feedback.list(scope), runs, cases };
}

describe.skipIf(!hasPg)('migrate-data json → postgres', () => {
  let db: TestDatabase;
  let target: TestSchema;
  let dataPath: string;
  let embedder: Embedder;
  const saved = { ...process.env };
  const env = () => ({
    SERVICE_DATABASE_URL: target.url,
    SERVICE_LOCAL_EMBEDDINGS: '1',
    SERVICE_EMBEDDING_MODEL_PATH: MODEL_PATH,
    SERVICE_LLM_PROVIDER: 'none',
  });

  beforeAll(async () => {
    db = await createTestDatabase('migrate_data');
    target = await createMigratedSchema(db, 'target');
    dataPath = await mkdtemp(join(tmpdir(), 'svc-migrate-data-'));
    embedder = await createEmbedder(loadConfig(env()), { logger: silentLogger, instruments: noopInstruments });

    // A JSON store as a server would leave it: two scopes, vectors from the same model.
    const json = await createJsonStorage({ dataPath });
    const vectors = await embedder.embed(TASKS);
    for (const [i, task] of TASKS.entries()) {
      const scope = i < 3 ? A : B;
      await json.patterns.insert(scope, record(i, task), vectors[i]);
      for (const score of [4, 6 + i, 7]) await json.evals.add(scope, record(i, task).id, score, `2025-04-0${i + 1}T00:00:00.000Z`);
    }
    await json.skills.set(A, record(0, TASKS[0]).id, ['csv', 'python']);
    await json.skills.set(B, record(4, TASKS[4]).id, ['regex']);
    await json.feedback.upsert(A, [cluster]);
    await json.evaluationRuns.putRuns(A, [makeRun(1, { blessed: true }), makeRun(2)]);
    await json.evaluationRuns.putCase(A, runId(1), makeCase('b'));
    await json.evaluationRuns.putCase(A, runId(1), makeCase('a'));
    await json.meta.setEmbeddingInfo({ ...embedder.info });
    await json.close();
  });

  afterEach(() => {
    process.env = { ...saved };
  });

  afterAll(async () => {
    await embedder?.close?.();
    await rm(dataPath, { recursive: true, force: true });
    await db?.drop();
  });

  it('copies patterns, vectors, evals, skills and feedback, and a re-run copies nothing twice', async () => {
    Object.assign(process.env, env());
    const first = await cli(['migrate-data', '--from', 'json', '--to', 'postgres', '--data-path', dataPath]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout);
    // The JSON store hands out its vectors: copied as they are, no model loaded.
    expect(report).toMatchObject({ scopes: 2, patterns: 5, skipped: 0, evals: 15, skills: 2, feedback: 1, evaluation_runs: 2, vectors: 'copied' });
    expect(report.embedding).toEqual(embedder.info);

    const json = await createJsonStorage({ dataPath });
    const pg = await createPostgresStorage(pgConfig(target.url));
    try {
      for (const scope of [A, B]) {
        expect(await dump(pg, scope)).toEqual(await dump(json, scope));
        const ids = (await dump(json, scope)).patterns.map((p) => p.id);
        expect(await pg.patterns.vectors!(scope, ids)).toEqual(await json.patterns.vectors!(scope, ids));
      }
      expect(await pg.meta.getEmbeddingInfo()).toEqual(embedder.info);
      // Vectors made it too: a paraphrase finds its pattern by meaning, in the right scope only.
      const [query] = await embedder.embed(['sum a column of a CSV file']);
      const hits = await pg.patterns.search(A, query, 3);
      expect(hits[0].pattern.id).toBe(record(0, TASKS[0]).id);
      expect(hits[0].similarity).toBeGreaterThan(hits[1].similarity);
      const [exact] = await embedder.embed([TASKS[4]]);
      expect((await pg.patterns.search(B, exact, 1))[0].similarity).toBeCloseTo(1, 4);
    } finally {
      await json.close();
      await pg.close();
    }

    const again = await cli(['migrate-data', '--from', 'json', '--to', 'postgres', '--data-path', dataPath, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ patterns: 0, skipped: 5, evals: 0, feedback: 1, evaluation_runs: 0 });
  });

  it('copies stored vectors as they are when the source offers them (no model needed)', async () => {
    const copy = await createMigratedSchema(db, 'copy');
    const source = await createPostgresStorage(pgConfig(target.url));
    const dest = await createPostgresStorage(pgConfig(copy.url));
    try {
      const report = await copyStorage(source, dest, {
        embedder: () => Promise.reject(new Error('the model must not be loaded when vectors can be copied')),
      });
      expect(report).toMatchObject({ vectors: 'copied', patterns: 5, evals: 15 });
      for (const scope of [A, B]) {
        expect(await dump(dest, scope)).toEqual(await dump(source, scope));
        const ids = (await dump(source, scope)).patterns.map((p) => p.id);
        expect(await dest.patterns.vectors!(scope, ids)).toEqual(await source.patterns.vectors!(scope, ids));
      }
    } finally {
      await source.close();
      await dest.close();
      await copy.drop();
    }
  });

  it('rejects other storage pairs and a missing data path as usage errors', async () => {
    Object.assign(process.env, env());
    const pair = await cli(['migrate-data', '--from', 'postgres', '--to', 'json']);
    expect(pair.code).toBe(2);
    expect(pair.stderr).toMatch(/only --from json --to postgres is supported/);
    const missing = await cli(['migrate-data', '--from', 'json', '--to', 'postgres', '--data-path', join(dataPath, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/JSON data path .*nope does not exist/);
  });
});
