/**
 * Issue 18 (1, 2): JSON data written before the contract refused NUL, and task vectors a model
 * reduced to nothing (zero or NaN), must not stop `migrate-data` halfway: NUL is dropped (the
 * one thing PostgreSQL text cannot hold, reported as nul_stripped), such vectors go in as zeros.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../commands/main.js';
import { createJsonStorage } from '../../src/adapters/storage/json/index.js';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import type { PatternRecord, Scope } from '../../src/core/types.js';
import { fakeIo } from '../support/fake-io.js';
import { createMigratedSchema, createTestDatabase, pgConfig, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';

const hasPg = await requirePostgres('migrate-data with hostile JSON data');
const SCOPE: Scope = { tenant_id: 'default', project_id: 'default' };
const DIM = 8;

function record(i: number, fields: Partial<PatternRecord> = {}): PatternRecord {
  const at = new Date(Date.UTC(2025, 3, 1, 10, 0, i)).toISOString();
  return {
    id: `h${String(i).padStart(6, '0')}`, task: `plain task number ${i}`, code: `code_${i}()`, output: null,
    eval_score: 7, success_score: 7, reuse_count: 0, run_id: null, classification: 'internal', source: 'api',
    author: null, expires_at: null, redacted: false, created_at: at, updated_at: at, last_aged_at: null, ...fields,
  };
}

const unit = (i: number) => Float32Array.from({ length: DIM }, (_, d) => (d === i % DIM ? 1 : 0));

describe.skipIf(!hasPg)('migrate-data copes with NUL and meaningless vectors in JSON data', () => {
  let db: TestDatabase;
  let target: TestSchema;
  let dataPath: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    db = await createTestDatabase('migrate_hostile');
    target = await createMigratedSchema(db, 'target');
    dataPath = await mkdtemp(join(tmpdir(), 'svc-migrate-hostile-'));
    const json = await createJsonStorage({ dataPath });
    await json.patterns.insert(SCOPE, record(0), unit(0));
    await json.patterns.insert(SCOPE, record(1), unit(1));
    await json.patterns.insert(SCOPE, record(2, { task: 'nul\u0000task', code: 'a\u0000b', output: '\u0000', author: 'x\u0000', run_id: '\u0000r' }), unit(2));
    await json.patterns.insert(SCOPE, record(3, { task: '\u{1F600}\u{1F680}' }), new Float32Array(DIM).fill(Number.NaN));
    await json.patterns.insert(SCOPE, record(4, { task: '\u200b\u200b' }), new Float32Array(DIM));
    await json.patterns.insert(SCOPE, record(5), unit(5));
    await json.skills.set(SCOPE, record(2).id, ['ta\u0000g']);
    await json.feedback.upsert(SCOPE, [{
      id: 'fb1', text: 'handle \u0000 input', count: 2, score: 0.6, last_seen: '2025-04-02T00:00:00.000Z', last_decayed_at: null,
      tasks: ['nul\u0000task'],
    }]);
    await json.meta.setEmbeddingInfo({ provider: 'local', model: 'test-8d', dimension: DIM });
    await json.close();
  });

  afterAll(async () => {
    process.env = { ...saved };
    await rm(dataPath, { recursive: true, force: true });
    await db?.drop();
  });

  it('copies every pattern, NUL dropped and reported, meaningless vectors as zeros', async () => {
    Object.assign(process.env, { SERVICE_DATABASE_URL: target.url, SERVICE_LLM_PROVIDER: 'none' });
    const { io, stdout, stderr } = fakeIo({ env: { noColor: true } });
    const code = await main(['node', 'service', 'migrate-data', '--from', 'json', '--to', 'postgres', '--data-path', dataPath, '--json'], io);
    expect(stderr.text).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout.text)).toMatchObject({ patterns: 6, skipped: 0, nul_stripped: 1, skills: 1, feedback: 1 });

    const pg = await createPostgresStorage(pgConfig(target.url));
    try {
      const copied = await pg.patterns.get(SCOPE, record(2).id);
      expect(copied).toMatchObject({ task: 'nultask', code: 'ab', output: '', author: 'x', run_id: 'r' });
      expect(await pg.skills.get(SCOPE, record(2).id)).toEqual(['tag']);
      expect((await pg.feedback.list(SCOPE))[0]).toMatchObject({ text: 'handle  input', tasks: ['nultask'] });
      const vectors = await pg.patterns.vectors!(SCOPE, [record(3).id, record(4).id, record(5).id]);
      expect([...vectors.get(record(3).id)!]).toEqual(new Array(DIM).fill(0));
      expect([...vectors.get(record(4).id)!]).toEqual(new Array(DIM).fill(0));
      // A real vector still finds its pattern first; the zero rows never outrank it.
      const hits = await pg.patterns.search(SCOPE, unit(5), 6);
      expect(hits[0].pattern.id).toBe(record(5).id);
      expect(hits.every((h) => Number.isFinite(h.similarity))).toBe(true);
    } finally {
      await pg.close();
    }
  });
});
