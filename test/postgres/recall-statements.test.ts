import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateUp } from '../../src/adapters/migrations/index.js';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { createServicePool, type PostgresPool } from '../../src/adapters/storage/postgres/pool.js';
import { silentLogger } from '../../src/ports/observability.js';
import type { Storage } from '../../src/ports/storage.js';
import { lookupsRecorded } from '../../src/services/lookup-events.js';
import { startServer, type TestServer } from '../api/helpers.js';
import { createTestDatabase, pgConfig, requirePostgres, type TestDatabase } from '../support/pg.js';

const hasPg = await requirePostgres('recall statements');
/** Learn holds a lock on one connection while it writes on another: the pool needs two or more. */
const POOL_MAX = 3;

/**
 * What one recall asks of PostgreSQL (issue 28): the statements it sends, and that the hot ones
 * are named prepared statements. pg_prepared_statements is per session, so the test reads it
 * on every connection of the pool.
 */
describe.skipIf(!hasPg)('recall on PostgreSQL: round trips', () => {
  let db: TestDatabase;
  let pool: PostgresPool;
  let storage: Storage;
  let t: TestServer;
  const sent: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('recall_statements');
    const config = pgConfig(db.url, { SERVICE_DB_POOL_MAX: String(POOL_MAX) });
    pool = createServicePool(config, { logger: silentLogger, search: true });
    await migrateUp(pool);
    // Every statement sent on a pooled connection once it is checked out (the session setup
    // that the pool runs on a new connection is not part of any request).
    const wrapped = new WeakSet<object>();
    const watch = (client: pg.PoolClient): pg.PoolClient => {
      if (!wrapped.has(client)) {
        wrapped.add(client);
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
          const first = args[0];
          sent.push(typeof first === 'string' ? first : (first as { text: string }).text);
          return query(...args);
        };
      }
      return client;
    };
    const connect = pool.connect.bind(pool) as (cb?: (err: Error | undefined, client: pg.PoolClient, done: unknown) => void) => Promise<pg.PoolClient> | undefined;
    // pg-pool's own query() checks out with a callback; the service's code awaits the promise.
    (pool as unknown as { connect: (cb?: (err: Error | undefined, client: pg.PoolClient, done: unknown) => void) => unknown }).connect = (cb) => {
      if (cb) return connect((err, client, done) => cb(err, err ? client : watch(client), done));
      return connect()!.then(watch);
    };
    storage = await createPostgresStorage(config, { pool });
    const unlimited = String(1_000_000);
    t = await startServer({ SERVICE_RATE_LIMIT_DEFAULT: unlimited, SERVICE_RATE_LIMIT_EXPENSIVE: unlimited }, { storage });
    for (const task of ['parse a CSV file', 'parse a TSV file', 'send an email', 'resize an image']) {
      expect((await t.call('POST', '/v1/learn', { task, code: `// ${task}`, eval_score: 8 })).statusCode).toBe(200);
    }
  });

  afterAll(async () => {
    await t?.close();
    await storage?.close();
    await pool?.end();
    await db?.drop();
  });

  /** Hybrid recall's one search statement: vector neighbours, then keyword candidates from the postings (migration 0008). */
  function expectHybridSearch(statement: string | undefined): void {
    expect(statement).toMatch(/^WITH doc AS .*\bnearest AS MATERIALIZED .*\bkeyword AS MATERIALIZED \(.*\bFROM recall_postings\b.*/s);
    expect(statement).not.toMatch(/\bterms\b.*&&|@>/);
    // The per-row BM25 sum has float8 constants: a bare 0.3 is numeric, slow on every posting row.
    // With the code field (BM25F, migration 0013) the same sum for a term only the task holds.
    expect(statement).toMatch(/wi\.weight \* r\.tf \/ \(r\.tf \+ [\d.]+::float8 \+ wi\.per_len \* r\.len\)/);
    expect(statement).toMatch(/wi\.weight \* r\.x \/ \(r\.x \+ [\d.]+::float8\)/);
    // Both limits are literals: bound as parameters, a generic plan guesses a tenth of the table
    // for the neighbours and joins them by a scan of the project, so every recall was planned anew.
    expect(statement).toMatch(/\bnearest AS MATERIALIZED \(\n[^\n]* LIMIT \d+\n\)/);
    expect(statement).toMatch(/\bkeyword AS MATERIALIZED \((\n[^\n]*)*?\n {2}LIMIT \d+\n\)/);
  }

  const isOutcomeCheck = (s: string) => s.startsWith('SELECT EXISTS (SELECT 1 FROM recall_outcomes');

  async function statementsOf(method: 'GET' | 'POST', task: string): Promise<string[]> {
    sent.length = 0;
    const res = method === 'POST'
      ? await t.call('POST', '/v1/recall', { task })
      : await t.call('GET', `/v1/recall?task=${encodeURIComponent(task)}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().matches.length).toBeGreaterThan(0);
    // A recall's bookkeeping is written after the answer, in a batch: wait for it, not for time.
    await lookupsRecorded(t.app.deps);
    await storage.settleRecallWrites();
    // No transaction of its own: BEGIN … COMMIT would be two more round trips.
    expect(sent.filter((s) => /^\s*(BEGIN|COMMIT)/i.test(s))).toEqual([]);
    // Outcome ranking asks whether the project has any outcome: one index probe per recall
    // at most, none once a "yes" is kept (docs/behavior.md "Outcome ranking").
    const outcomeChecks = sent.filter(isOutcomeCheck);
    expect(outcomeChecks.length).toBeLessThanOrEqual(1);
    return sent.filter((s) => !isOutcomeCheck(s));
  }

  /** The recall bookkeeping batch (recall-queue.ts): reuse bumps, counters, ROI events and traces in one statement. */
  function expectBookkeepingBatch(statement: string | undefined): void {
    expect(statement).toMatch(/^WITH bumps AS .*\breuse AS \(\s*UPDATE patterns .*\bcounters AS \(\s*INSERT INTO metrics_counters .*\bevents AS \(\s*INSERT INTO roi_events .*\btraces AS \(\s*INSERT INTO recall_traces /s);
  }

  it('sends three statements for a POST recall (search, page, then its bookkeeping in a batch statement)', async () => {
    const statements = await statementsOf('POST', 'parse a CSV file quickly');
    // The ROI trim runs on one append in 64 (by event id), never as a rule.
    const withoutTrim = statements.filter((s) => !s.startsWith('DELETE FROM roi_events'));
    expect(withoutTrim).toHaveLength(3);
    expectHybridSearch(withoutTrim[0]);
    expect(withoutTrim[1]).toMatch(/^SELECT .* FROM patterns WHERE .*ANY\(\(SELECT \$3::text\[\]\)::text\[\]\)/s);
    expectBookkeepingBatch(withoutTrim[2]);
  });

  it('sends three statements for a GET recall (search, page, its ROI event in a batch statement) and writes no reuse', async () => {
    const statements = (await statementsOf('GET', 'send an email now')).filter((s) => !s.startsWith('DELETE FROM roi_events'));
    expect(statements).toHaveLength(3);
    expectHybridSearch(statements[0]);
    expect(statements[1]).toMatch(/^SELECT .* FROM patterns WHERE .*ANY\(\(SELECT \$3::text\[\]\)::text\[\]\)/s);
    expectBookkeepingBatch(statements[2]);
  });

  it('writes the bookkeeping of concurrent recalls in fewer batch statements than recalls', async () => {
    await storage.settleRecallWrites();
    sent.length = 0;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => t.call('POST', '/v1/recall', { task: `parse a CSV file ${i}` })));
    for (const res of answers) expect(res.statusCode).toBe(200);
    await storage.settleRecallWrites();
    const batches = sent.filter((s) => s.startsWith('WITH bumps AS')).length;
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(batches).toBeLessThan(20);
  });

  it('trims ROI events on about one recall in 64, not on every recall', async () => {
    await storage.settleRecallWrites();
    sent.length = 0;
    for (let i = 0; i < 70; i++) expect((await t.call('POST', '/v1/recall', { task: `resize image ${i}` })).statusCode).toBe(200);
    await storage.settleRecallWrites();
    const trims = sent.filter((s) => s.startsWith('DELETE FROM roi_events')).length;
    expect(trims).toBeGreaterThanOrEqual(1);
    expect(trims).toBeLessThanOrEqual(2);
  });

  it('runs the search, the page read and the bookkeeping batch as named prepared statements', async () => {
    const post = (await statementsOf('POST', 'parse a TSV file')).filter((s) => !s.startsWith('DELETE FROM roi_events'));
    const get = (await statementsOf('GET', 'parse a TSV file')).filter((s) => !s.startsWith('DELETE FROM roi_events'));
    // The very statements these recalls sent: search, page read, batch (POST), search, page read, batch (GET).
    const hot = [...post, ...get];
    expect(hot).toHaveLength(6);
    expectHybridSearch(hot[0]);
    // The page read's id array is opaque to the planner (a sub-select), so a generic plan serves it.
    expect(hot[1]).toContain('id = ANY((SELECT $3::text[])::text[])');
    expectBookkeepingBatch(hot[2]);
    expect(hot[4]).toContain('id = ANY((SELECT $3::text[])::text[])');
    expectBookkeepingBatch(hot[5]);
    // Every connection of the pool at once (none can be handed out twice), each asked for its own.
    const clients = await Promise.all(Array.from({ length: POOL_MAX }, () => pool.connect()));
    const prepared: { name: string; statement: string }[] = [];
    try {
      for (const client of clients) {
        prepared.push(...(await client.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements')).rows);
      }
    } finally {
      for (const client of clients) client.release();
    }
    const named = new Set(prepared.filter((p) => p.name.startsWith('svc_')).map((p) => p.statement));
    for (const statement of hot) expect(named.has(statement), statement.slice(0, 80)).toBe(true);
  });
});
