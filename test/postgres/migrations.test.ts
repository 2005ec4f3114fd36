import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  defaultMigrationsDir, migrateDown, migrateUp, migrationStatus,
} from '../../src/adapters/migrations/index.js';
import { keywordTermsOf } from '../../src/core/bm25.js';
import { codeTermsOf } from '../../src/core/code-terms.js';
import { incompressibleWord } from '../contract/storage.contract.fixtures.js';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';

const hasPg = await requirePostgres('migrations');

/** Every revision in migrations/, in order. */
const ALL = ['0001_init', '0002_pattern_counts', '0003_fast_recall', '0004_reference_pattern_ids', '0006_billing', '0007_hybrid_recall', '0008_keyword_postings', '0009_keyword_term_cap', '0010_recall_outcomes', '0011_evaluation_runs', '0012_judge_cache', '0013_code_keyword_field', '0014_shared_rate_limits'];
const LATEST = ALL[ALL.length - 1];

const EXPECTED_TABLES = [
  'analytics_rollups', 'api_keys', 'audit_log', 'eval_observations', 'evaluation_cases', 'evaluation_runs', 'feedback_clusters', 'jobs', 'judge_cache', 'meta',
  'metrics_counters', 'pattern_counts', 'pattern_skills', 'patterns', 'processed_payment_events', 'projects',
  'rate_limit_windows', 'recall_doc_stats', 'recall_outcomes', 'recall_postings', 'recall_term_stats', 'recall_traces', 'recall_vector_sums', 'roi_events',
  'schema_migrations', 'subscriptions', 'tenants', 'usage_counters',
];

/** Tables, columns and indexes of the public schema: equal fingerprints mean equal schemas. */
async function fingerprint(pool: pg.Pool): Promise<string[]> {
  const cols = await pool.query<{ f: string }>(
    `SELECT table_name || '.' || column_name || ':' || data_type || ':' || is_nullable AS f
     FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1`,
  );
  const idx = await pool.query<{ f: string }>(
    "SELECT indexdef AS f FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1",
  );
  return [...cols.rows.map((r) => r.f), ...idx.rows.map((r) => r.f)];
}

async function tables(pool: pg.Pool): Promise<string[]> {
  const res = await pool.query<{ t: string }>(
    "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
  );
  return res.rows.map((r) => r.t);
}

describe.skipIf(!hasPg)('migrations (PostgreSQL)', () => {
  let db: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase('migrations');
  });
  afterAll(async () => {
    await db?.drop();
  });
  beforeEach(async () => {
    pool = new pg.Pool({ connectionString: db.url, max: 3 });
    // Every test starts from an empty schema.
    await pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public; CREATE EXTENSION IF NOT EXISTS vector');
  });
  afterEach(async () => {
    await pool.end();
  });

  it('migrates an empty database to the latest revision', async () => {
    const before = await migrationStatus(pool);
    expect(before.current).toBeNull();
    expect(before.pending).toEqual(ALL);

    const steps: string[] = [];
    const applied = await migrateUp(pool, { onStep: (dir, label) => steps.push(`${dir} ${label}`) });
    expect(applied).toEqual(ALL);
    expect(steps).toEqual(ALL.map((m) => `up ${m}`));
    expect(await tables(pool)).toEqual(EXPECTED_TABLES);

    const after = await migrationStatus(pool);
    expect(after.current).toBe(LATEST);
    expect(after.latest).toBe(LATEST);
    expect(after.pending).toEqual([]);
    expect(after.migrations[0].applied_at).not.toBeNull();
  });

  it('re-running up is a no-op', async () => {
    await migrateUp(pool);
    const first = await pool.query('SELECT version, applied_at FROM schema_migrations');
    const schema = await fingerprint(pool);

    expect(await migrateUp(pool)).toEqual([]);
    expect((await pool.query('SELECT version, applied_at FROM schema_migrations')).rows).toEqual(first.rows);
    expect(await fingerprint(pool)).toEqual(schema);
  });

  it('down then up round-trips to the same schema', async () => {
    await migrateUp(pool);
    const schema = await fingerprint(pool);

    expect(await migrateDown(pool)).toEqual(['0014_shared_rate_limits']);
    expect(await tables(pool)).not.toContain('rate_limit_windows');
    expect(await migrateDown(pool)).toEqual(['0013_code_keyword_field']);
    expect(await migrateDown(pool)).toEqual(['0012_judge_cache']);
    expect(await tables(pool)).not.toContain('judge_cache');
    expect(await migrateDown(pool)).toEqual(['0011_evaluation_runs']);
    expect(await tables(pool)).not.toContain('evaluation_runs');
    expect(await migrateDown(pool)).toEqual(['0010_recall_outcomes']);
    expect(await tables(pool)).not.toContain('recall_traces');
    expect(await tables(pool)).not.toContain('recall_outcomes');
    expect(await migrateDown(pool)).toEqual(['0009_keyword_term_cap']);
    expect(await migrateDown(pool)).toEqual(['0008_keyword_postings']);
    expect(await tables(pool)).not.toContain('recall_postings');
    expect(await migrateDown(pool)).toEqual(['0007_hybrid_recall']);
    expect(await tables(pool)).not.toContain('recall_term_stats');
    expect(await migrateDown(pool)).toEqual(['0006_billing']);
    expect(await migrateDown(pool)).toEqual(['0004_reference_pattern_ids']);
    expect(await migrateDown(pool)).toEqual(['0003_fast_recall']);
    expect(await migrateDown(pool)).toEqual(['0002_pattern_counts']);
    expect(await tables(pool)).not.toContain('pattern_counts');
    expect(await migrateDown(pool)).toEqual(['0001_init']);
    expect(await tables(pool)).toEqual(['schema_migrations']);
    expect((await migrationStatus(pool)).pending).toEqual(ALL);
    expect(await migrateDown(pool)).toEqual([]);

    expect(await migrateUp(pool)).toEqual(ALL);
    expect(await fingerprint(pool)).toEqual(schema);

    expect(await migrateDown(pool, { to: '0' })).toEqual([...ALL].reverse());
    expect(await migrateUp(pool, { to: LATEST })).toEqual(ALL);
    expect(await fingerprint(pool)).toEqual(schema);
  });

  it('0003: HNSW over half-precision copies, no index on updated_at, pages kept 25% free; down restores 0002', async () => {
    const indexes = async () => (await pool.query<{ f: string }>(
      "SELECT indexdef AS f FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'patterns' ORDER BY indexname",
    )).rows.map((r) => r.f);
    const fillfactor = async () => (await pool.query<{ o: string[] | null }>(
      "SELECT reloptions AS o FROM pg_class WHERE oid = 'public.patterns'::regclass",
    )).rows[0].o;
    await migrateUp(pool, { to: '0002_pattern_counts' });
    const before = await indexes();
    const hnsw = (defs: string[]) => defs.filter((d) => d.includes('USING hnsw'));
    expect(hnsw(before)).toHaveLength(2);
    expect(hnsw(before).every((d) => d.includes('vector_cosine_ops') && !d.includes('halfvec'))).toBe(true);
    // Rows stored before the upgrade are in the rebuilt index (it is built over the table).
    await pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       SELECT 't', 'p', 'x' || g, 'task', 'code', 5, 5, now(), now(), 384, array_fill(g::real, ARRAY[384])::vector
       FROM generate_series(1, 3) g`,
    );

    expect(await migrateUp(pool, { to: '0003' })).toEqual(['0003_fast_recall']);
    const after = await indexes();
    expect(hnsw(after).map((d) => /embedding\)::halfvec\((\d+)\)\) halfvec_cosine_ops\) WHERE \(dim = (\d+)\)/.exec(d)?.slice(1))).toEqual([
      ['1536', '1536'], ['384', '384'],
    ]);
    expect(after.some((d) => d.includes('updated_at'))).toBe(false);
    expect(await fillfactor()).toEqual(['fillfactor=75']);
    const client = await pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off');
      const explain = await client.query<{ 'QUERY PLAN': string }>(
        "EXPLAIN SELECT id FROM patterns WHERE dim = 384 ORDER BY embedding::halfvec(384) <=> array_fill(1::real, ARRAY[384])::halfvec(384) LIMIT 3",
      );
      expect(explain.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Scan using patterns_embedding_384_hnsw/);
      await client.query('COMMIT');
    } finally {
      client.release();
    }

    expect(await migrateDown(pool)).toEqual(['0003_fast_recall']);
    expect(await indexes()).toEqual(before);
    expect(await fillfactor()).toBeNull();
  });

  it('0007: figures of patterns stored before it are backfilled, and triggers keep them after', async () => {
    const insert = (id: string, task: string, embedding: string) => pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       VALUES ('t', 'p', $1, $2, 'c', 5, 5, now(), now(), 3, $3)`,
      [id, task, embedding],
    );
    await migrateUp(pool, { to: '0006' });
    await insert('a1', 'Parse the CSV, parse it', '[3,0,4]');
    await insert('a2', 'sum a column', '[0,0,0]');
    expect(await migrateUp(pool, { to: '0007' })).toEqual(['0007_hybrid_recall']);
    const stats = async () => ({
      doc: (await pool.query('SELECT docs::int, total_terms::int FROM recall_doc_stats')).rows,
      df: (await pool.query('SELECT term, df::int FROM recall_term_stats ORDER BY term')).rows.map((r) => `${r.term}:${r.df}`),
      sums: (await pool.query('SELECT vector_sum::text, vectors::int FROM recall_vector_sums')).rows,
    });
    // Terms as core/bm25.ts tokenizes them; the zero vector is not in the mean.
    expect(await stats()).toEqual({
      doc: [{ docs: 2, total_terms: 8 }],
      df: ['a:1', 'column:1', 'csv:1', 'it:1', 'parse:1', 'sum:1', 'the:1'],
      sums: [{ vector_sum: '[0.6,0,0.8]', vectors: 1 }],
    });
    await pool.query("UPDATE patterns SET task = 'sum two columns', embedding = '[0,1,0]' WHERE id = 'a2'");
    await pool.query("DELETE FROM patterns WHERE id = 'a1'");
    expect(await stats()).toEqual({
      doc: [{ docs: 1, total_terms: 3 }],
      df: ['columns:1', 'sum:1', 'two:1'],
      sums: [{ vector_sum: '[0,1,0]', vectors: 1 }],
    });
  });

  it('0008: keyword postings of patterns stored before it are backfilled, and triggers keep them after', async () => {
    const insert = (id: string, task: string) => pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       VALUES ('t', 'p', $1, $2, 'c', 5, 5, now(), now(), 3, '[1,0,0]')`,
      [id, task],
    );
    await migrateUp(pool, { to: '0007' });
    await insert('a1', 'Parse the CSV, parse it');
    await insert('a2', 'sum a column');
    expect(await migrateUp(pool, { to: '0008' })).toEqual(['0008_keyword_postings']);
    // One row per pattern and distinct term: the term's count in the task and the task's length.
    const postings = async () => (await pool.query(
      "SELECT pattern_id || ':' || term || ':' || tf || '/' || len AS p FROM recall_postings ORDER BY pattern_id, term",
    )).rows.map((r) => r.p);
    expect(await postings()).toEqual([
      'a1:csv:1/5', 'a1:it:1/5', 'a1:parse:2/5', 'a1:the:1/5', 'a2:a:1/3', 'a2:column:1/3', 'a2:sum:1/3',
    ]);
    await pool.query("UPDATE patterns SET task = 'sum two columns, two' WHERE id = 'a2'");
    await pool.query("UPDATE patterns SET reuse_count = 1 WHERE id = 'a1'");
    await insert('a3', '');
    await pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       SELECT 't', 'q', 'b' || i, 'copy ' || i, 'c', 5, 5, now(), now(), 3, '[1,0,0]' FROM generate_series(1, 2) i`,
    );
    await pool.query("DELETE FROM patterns WHERE id = 'a1'");
    expect(await postings()).toEqual([
      'a2:columns:1/4', 'a2:sum:1/4', 'a2:two:2/4', 'b1:1:1/2', 'b1:copy:1/2', 'b2:2:1/2', 'b2:copy:1/2',
    ]);
    // The postings equal what the patterns' terms say, whatever the writes were.
    const derived = await pool.query(
      `SELECT count(*)::int AS n FROM (
         SELECT tenant_id, project_id, u.term, id, count(*)::int, cardinality(terms) FROM patterns, unnest(terms) u(term)
         GROUP BY tenant_id, project_id, u.term, id, cardinality(terms)
         EXCEPT SELECT tenant_id, project_id, term, pattern_id, tf, len FROM recall_postings
       ) d`,
    );
    expect(derived.rows[0].n).toBe(0);
    expect(await migrateDown(pool, { to: '0007' })).toEqual(['0008_keyword_postings']);
    expect(await tables(pool)).not.toContain('recall_postings');
  });

  it('0009: a term over 256 bytes is no keyword (core MAX_KEYWORD_TERM_BYTES): rows holding one are re-indexed, new ones store', async () => {
    const insert = (id: string, task: string) => pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       VALUES ('t', 'p', $1, $2, 'c', 5, 5, now(), now(), 3, '[1,0,0]')`,
      [id, task],
    );
    const row = async (id: string) => (await pool.query<{ task: string; terms: string[] }>('SELECT task, terms FROM patterns WHERE id = $1', [id])).rows[0];
    const postings = async () => (await pool.query(
      "SELECT pattern_id || ':' || term || ':' || tf || '/' || len AS p FROM recall_postings ORDER BY pattern_id, term",
    )).rows.map((r) => r.p);
    await migrateUp(pool, { to: '0008' });
    const stored = `parse ${'x'.repeat(1000)} file `;
    await insert('a1', stored);
    // Before 0009, a word too long for a btree entry cannot be stored at all.
    const blob = incompressibleWord(3000);
    await expect(insert('a2', `blob ${blob}`)).rejects.toThrow(/index row size|btree/);

    expect(await migrateUp(pool, { to: '0009' })).toEqual(['0009_keyword_term_cap']);
    expect(await row('a1')).toEqual({ task: stored, terms: ['parse', 'file'] });
    await insert('a2', `blob ${blob}`);
    // 256 bytes is a keyword, 257 is not, counted in UTF-8 bytes (é is two).
    const edge = `${'é'.repeat(128)} ${'é'.repeat(128)}z ${'q'.repeat(256)} ${'q'.repeat(257)}`;
    await insert('a3', edge);
    for (const id of ['a1', 'a2', 'a3']) {
      const { task, terms } = await row(id);
      expect(terms, id).toEqual(keywordTermsOf(task));
    }
    expect((await row('a3')).terms).toEqual(['é'.repeat(128), 'q'.repeat(256)]);
    expect((await postings()).map((p) => p.replace(/(.)\1{20,}/g, '$1…'))).toEqual([
      'a1:file:1/2', 'a1:parse:1/2', 'a2:blob:1/1', 'a3:q…:1/2', 'a3:é…:1/2',
    ]);
    const stats = await pool.query<{ docs: string; total_terms: string; long_terms: number }>(
      `SELECT docs, total_terms, (SELECT count(*)::int FROM recall_term_stats WHERE octet_length(term) > 256) AS long_terms FROM recall_doc_stats`,
    );
    expect(stats.rows).toEqual([{ docs: '3', total_terms: '5', long_terms: 0 }]);
  });

  it('0013: the code as a second keyword field: the same terms as core codeTermsOf, existing rows backfilled, down restores 0009', async () => {
    const insert = (id: string, task: string, code: string) => pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       VALUES ('t', 'p', $1, $2, $3, 5, 5, now(), now(), 3, '[1,0,0]')`,
      [id, task, code],
    );
    const codes = [
      'def parseCsvColumn(path):\n    return HTTPServer.get_all("Total amount")  # sum it',
      'x = utf8Decode(b"caf\u00e9 na\u00efve")\nXMLHttpRequest aBCd ABC snake_case_name __init__',
      `${'w'.repeat(300)} ${Array.from({ length: 200 }, (_, i) => `t${i}`).join(' ')}`,
      '',
    ];
    await migrateUp(pool, { to: '0012' });
    await insert('a1', 'parse a file', codes[0]);
    await insert('a2', 'decode it', codes[1]);
    const derived = async () => ({
      doc: (await pool.query('SELECT docs::int, total_terms::int, total_code_terms::int FROM recall_doc_stats')).rows,
      df: (await pool.query('SELECT term, df::int FROM recall_term_stats ORDER BY term')).rows.map((r) => `${r.term}:${r.df}`),
      postings: (await pool.query("SELECT pattern_id || ':' || field || ':' || term || ':' || tf || '/' || len AS p FROM recall_postings ORDER BY 1")).rows.map((r) => r.p),
    });
    expect(await migrateUp(pool, { to: '0013' })).toEqual(['0013_code_keyword_field']);
    // Rows stored before: backfilled as the triggers would have written them.
    const backfilled = await derived();
    await pool.query('DELETE FROM patterns');
    await insert('a1', 'parse a file', codes[0]);
    await insert('a2', 'decode it', codes[1]);
    expect(await derived()).toEqual(backfilled);
    expect(backfilled.doc).toEqual([{ docs: 2, total_terms: 5, total_code_terms: codeTermsOf(codes[0]).length + codeTermsOf(codes[1]).length }]);
    // Over task or code: a term in both fields of one pattern counts once; one in code alone counts.
    expect(backfilled.df).toEqual(expect.arrayContaining(['parse:1', 'csv:1', 'decode:1', 'file:1']));
    expect(backfilled.postings).toContain('a1:1:csv:1/' + codeTermsOf(codes[0]).length);
    await insert('a3', 'long', codes[2]);
    await insert('a4', 'empty', codes[3]);
    for (const [i, code] of codes.entries()) {
      const { rows } = await pool.query<{ code_terms: string[] }>('SELECT code_terms FROM patterns WHERE id = $1', [`a${i + 1}`]);
      expect(rows[0].code_terms, code.slice(0, 40)).toEqual(codeTermsOf(code));
    }
    // A code change re-indexes the row's code postings and figures.
    await pool.query("UPDATE patterns SET code = 'def total(xs): return xs' WHERE id = 'a1'");
    const changed = await derived();
    expect(changed.postings.filter((p) => p.startsWith('a1:1:'))).toEqual(['a1:1:def:1/5', 'a1:1:return:1/5', 'a1:1:total:1/5', 'a1:1:xs:2/5']);
    expect(changed.df).not.toContain('csv:1');
    expect(await migrateDown(pool, { to: '0012' })).toEqual(['0013_code_keyword_field']);
    expect((await pool.query('SELECT count(*)::int AS n FROM recall_postings')).rows[0].n).toBe(
      (await pool.query('SELECT sum((SELECT count(DISTINCT t) FROM unnest(terms) t))::int AS n FROM patterns')).rows[0].n,
    );
    expect((await pool.query("SELECT df::int FROM recall_term_stats WHERE term = 'parse'")).rows).toEqual([{ df: 1 }]);
  });

  it('0004: pattern ids of the reference shape (both cases, _ and -) are accepted; dots and slashes still are not', async () => {
    const insert = (id: string) => pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       VALUES ('t', 'p', $1, 't', 'c', 5, 5, now(), now(), 3, '[1,0,0]')`,
      [id],
    );
    await migrateUp(pool, { to: '0003' });
    await expect(insert('3f2a9c1b_1731000000000_aB3-xY')).rejects.toThrow(/patterns_id_check/);
    expect(await migrateUp(pool, { to: '0004' })).toEqual(['0004_reference_pattern_ids']);
    await insert('3f2a9c1b_1731000000000_aB3-xY');
    await insert('0abc123');
    await expect(insert('a.b')).rejects.toThrow(/patterns_id_check/);
    await expect(insert('a/b')).rejects.toThrow(/patterns_id_check/);
    // Down refuses while such ids exist; without them it restores the minted-ids-only check.
    await expect(migrateDown(pool)).rejects.toThrow(/0004_reference_pattern_ids \(down\) failed/);
    await pool.query("DELETE FROM patterns WHERE id = '3f2a9c1b_1731000000000_aB3-xY'");
    expect(await migrateDown(pool)).toEqual(['0004_reference_pattern_ids']);
  });

  it('0002 seeds the per-scope pattern counts from existing rows and keeps them on insert and delete', async () => {
    await migrateUp(pool, { to: '0001_init' });
    const insert = (tenant: string, id: string) => pool.query(
      `INSERT INTO patterns (tenant_id, project_id, id, task, code, eval_score, success_score, created_at, updated_at, dim, embedding)
       VALUES ($1, 'p', $2, 't', 'c', 5, 5, now(), now(), 3, '[1,0,0]')`,
      [tenant, id],
    );
    await insert('a', '1');
    await insert('a', '2');
    await insert('b', '1');
    await migrateUp(pool);
    const counts = async () => (await pool.query<{ tenant_id: string; n: string }>(
      'SELECT tenant_id, n FROM pattern_counts ORDER BY tenant_id',
    )).rows.map((r) => `${r.tenant_id}=${r.n}`);
    expect(await counts()).toEqual(['a=2', 'b=1']);
    await insert('a', '3');
    await insert('c', '1');
    await pool.query(`DELETE FROM patterns WHERE tenant_id = 'b'`);
    expect(await counts()).toEqual(['a=3', 'b=0', 'c=1']);
  });

  it('two concurrent runs both succeed and apply each migration once', async () => {
    const other = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const [a, b] = await Promise.all([migrateUp(pool), migrateUp(other)]);
      expect([...a, ...b].sort()).toEqual(ALL);
      const rows = await pool.query('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.rows).toEqual(ALL.map((name) => ({ version: Number(name.slice(0, 4)) })));
      expect(await tables(pool)).toEqual(EXPECTED_TABLES);
    } finally {
      await other.end();
    }
  });

  describe('with a second revision', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'svc-migrations-'));
      await cp(defaultMigrationsDir(), dir, { recursive: true });
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('a failing migration rolls back and leaves the previous revision applied', async () => {
      await writeFile(join(dir, '0099_broken.up.sql'), 'CREATE TABLE half_done (x int);\nSELECT 1 / 0;\n');
      await writeFile(join(dir, '0099_broken.down.sql'), 'DROP TABLE half_done;\n');

      await expect(migrateUp(pool, { dir })).rejects.toThrow(/0099_broken \(up\) failed: division by zero/);
      const status = await migrationStatus(pool, { dir });
      expect(status.current).toBe(LATEST);
      expect(status.pending).toEqual(['0099_broken']);
      expect(await tables(pool)).not.toContain('half_done');
    });

    it('steps down one revision at a time or to a named one', async () => {
      await writeFile(join(dir, '0099_extra.up.sql'), 'CREATE TABLE extra (x int);\n');
      await writeFile(join(dir, '0099_extra.down.sql'), 'DROP TABLE extra;\n');
      expect(await migrateUp(pool, { dir, to: LATEST })).toEqual(ALL);
      expect(await migrateUp(pool, { dir })).toEqual(['0099_extra']);

      expect(await migrateDown(pool, { dir })).toEqual(['0099_extra']);
      expect((await migrationStatus(pool, { dir })).current).toBe(LATEST);
      await migrateUp(pool, { dir });
      expect(await migrateDown(pool, { dir, to: '0001_init' })).toEqual(['0099_extra', '0014_shared_rate_limits', '0013_code_keyword_field', '0012_judge_cache', '0011_evaluation_runs', '0010_recall_outcomes', '0009_keyword_term_cap', '0008_keyword_postings', '0007_hybrid_recall', '0006_billing', '0004_reference_pattern_ids', '0003_fast_recall', '0002_pattern_counts']);
      expect(await tables(pool)).not.toContain('extra');
      expect(await tables(pool)).toContain('patterns');
    });

    it('rejects unknown revisions and unpaired files', async () => {
      await expect(migrateDown(pool, { dir, to: '0098' })).rejects.toThrow(/unknown revision "0098"/);
      await expect(migrateUp(pool, { dir, to: '0001_wrong' })).rejects.toThrow(/unknown revision/);
      await writeFile(join(dir, '0100_lonely.up.sql'), 'SELECT 1;\n');
      await expect(migrateUp(pool, { dir })).rejects.toThrow(/0100_lonely needs both/);
    });
  });
});
