/**
 * `migrate-data` never stops at one pattern: a task holding a word too long for a btree entry
 * is copied (it is no keyword: core/bm25.ts MAX_KEYWORD_TERM_BYTES), and a pattern the target
 * refuses every time (here a trigger of the test) is reported and skipped while the rest is
 * copied; the exit code says the copy is incomplete, and a rerun once the cause is gone
 * copies what is missing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../commands/main.js';
import { createJsonStorage } from '../../src/adapters/storage/json/index.js';
import type { PatternRecord, Scope } from '../../src/core/types.js';
import { incompressibleWord } from '../contract/storage.contract.fixtures.js';
import { fakeIo } from '../support/fake-io.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';

const hasPg = await requirePostgres('migrate-data refusing one pattern');
const SCOPE: Scope = { tenant_id: 'default', project_id: 'default' };
const DIM = 8;
const LONG_WORD_TASK = `decode the ${incompressibleWord(3000)} payload`;

function record(i: number, fields: Partial<PatternRecord> = {}): PatternRecord {
  const at = new Date(Date.UTC(2025, 3, 1, 10, 0, i)).toISOString();
  return {
    id: `m${String(i).padStart(6, '0')}`, task: `plain task number ${i}`, code: `code_${i}()`, output: null,
    eval_score: 7, success_score: 7, reuse_count: 0, run_id: null, classification: 'internal', source: 'api',
    author: null, expires_at: null, redacted: false, created_at: at, updated_at: at, last_aged_at: null, ...fields,
  };
}

describe.skipIf(!hasPg)('migrate-data with a pattern the target refuses', () => {
  let db: TestDatabase;
  let target: TestSchema;
  let dataPath: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    db = await createTestDatabase('migrate_refused');
    target = await createMigratedSchema(db, 'target');
    await adminQuery(
      `CREATE FUNCTION ${target.schema}.refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN IF NEW.task LIKE 'refuse me%' THEN RAISE EXCEPTION 'the test refuses this row'; END IF; RETURN NEW; END $$;
       CREATE TRIGGER refuse_one BEFORE INSERT ON ${target.schema}.patterns FOR EACH ROW EXECUTE FUNCTION ${target.schema}.refuse_one();`,
      [], target.url,
    );
    dataPath = await mkdtemp(join(tmpdir(), 'svc-migrate-refused-'));
    const json = await createJsonStorage({ dataPath });
    // 70 patterns: two batches of the copy; the first holds the long word and the refused one.
    for (let i = 0; i < 70; i++) {
      const task = i === 10 ? LONG_WORD_TASK : i === 40 ? 'refuse me, says the target' : undefined;
      await json.patterns.insert(SCOPE, record(i, task === undefined ? {} : { task }), Float32Array.from({ length: DIM }, (_, d) => (d === i % DIM ? 1 : 0.1)));
    }
    await json.meta.setEmbeddingInfo({ provider: 'local', model: 'test-8d', dimension: DIM });
    await json.close();
  });

  afterAll(async () => {
    process.env = { ...saved };
    await rm(dataPath, { recursive: true, force: true });
    await db?.drop();
  });

  const migrate = async () => {
    Object.assign(process.env, { SERVICE_DATABASE_URL: target.url, SERVICE_LLM_PROVIDER: 'none' });
    const { io, stdout, stderr } = fakeIo({ env: { noColor: true } });
    const code = await main(['node', 'service', 'migrate-data', '--from', 'json', '--to', 'postgres', '--data-path', dataPath, '--json'], io);
    return { code, stderr: stderr.text, report: JSON.parse(stdout.text) as Record<string, unknown> };
  };
  const storedIds = async () => (await adminQuery('SELECT id FROM patterns ORDER BY id', [], target.url)).rows.map((r: { id: string }) => r.id);
  const refusedEntry = { tenant_id: 'default', project_id: 'default', id: 'm000040', reason: expect.stringMatching(/the test refuses this row/) };

  it('copies everything else (the long word too), reports the refused pattern, exit 1; a rerun after the cause is gone completes', async () => {
    const first = await migrate();
    expect(first.stderr).toBe('');
    expect(first.code).toBe(1);
    expect(first.report).toMatchObject({ patterns: 69, skipped: 0, refused: [refusedEntry] });
    const all = Array.from({ length: 70 }, (_, i) => record(i).id);
    expect(await storedIds()).toEqual(all.filter((id) => id !== 'm000040'));
    const longWord = await adminQuery('SELECT task FROM patterns WHERE id = $1', ['m000010'], target.url);
    expect(longWord.rows[0].task).toBe(LONG_WORD_TASK);

    // Asked again, the target refuses again: nothing else is written twice.
    const again = await migrate();
    expect(again).toMatchObject({ code: 1, report: { patterns: 0, skipped: 69, refused: [refusedEntry] } });

    await adminQuery(`DROP TRIGGER refuse_one ON ${target.schema}.patterns`, [], target.url);
    const last = await migrate();
    expect(last).toMatchObject({ code: 0, report: { patterns: 1, skipped: 69, refused: [] } });
    expect(await storedIds()).toEqual(all);
  });
});
