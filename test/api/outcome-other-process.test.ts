/**
 * An outcome may reach another server process than the one that answered its recall, before
 * that process has written the recall's trace (PostgreSQL writes recall bookkeeping in batches,
 * docs/behavior.md "Recall bookkeeping"). The outcome waits a bounded moment for the trace; a
 * trace that never comes is still 404. Process A here never flushes on its own (a long flush
 * interval): the test decides when its batch lands.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { NO_RATE_LIMITS } from './both-storages.js';
import { bearer, perFileDatabase, provisionKey, startDbServer, type DbServer } from './db-auth-helpers.js';

const hasPg = await requirePostgres('outcomes across processes');
const database = perFileDatabase('outcomeproc');
const SCOPE = { tenant_id: 'acme', project_id: 'web' };
const opened: DbServer[] = [];

afterAll(async () => {
  for (const s of opened) await s.close();
  await database.drop();
});

describe.skipIf(!hasPg)('outcomes reported to another process', () => {
  async function twoProcesses() {
    const url = (await database.schema()).url;
    // A holds its recall bookkeeping until told (a flush interval no test reaches).
    const a = await startDbServer(url, { ...NO_RATE_LIMITS, SERVICE_DB_RECALL_FLUSH_MS: '60000' }, {}, { runJobs: false });
    opened.push(a);
    const b = await startDbServer(url, NO_RATE_LIMITS, {}, { runJobs: false });
    opened.push(b);
    const auth = bearer((await provisionKey(a.keyStore, { ...SCOPE, role: 'editor' })).secret);
    const learned = await a.call('POST', '/v1/learn', { task: 'parse a CSV file and sum a column', code: 'print(1)', eval_score: 9 }, auth);
    expect(learned.statusCode).toBeLessThan(300);
    const recalled = await a.call('POST', '/v1/recall', { task: 'parse a CSV file and sum a column' }, auth);
    expect(recalled.statusCode).toBe(200);
    const { recall_id, matches } = recalled.json() as { recall_id: string; matches: { pattern_key: string }[] };
    return { a, b, auth, recall_id, pattern_key: matches[0].pattern_key };
  }

  it('finds the trace once the answering process writes its batch, within the moment it waits', async () => {
    const { a, b, auth, recall_id, pattern_key } = await twoProcesses();
    // A writes its batch only after B has looked for the trace and not found it.
    const outcomes = b.app.deps.storage.outcomes;
    const getTrace = outcomes.getTrace.bind(outcomes);
    let missed!: () => void;
    const bMissed = new Promise<void>((resolve) => (missed = resolve));
    outcomes.getTrace = async (scope, id) => {
      const trace = await getTrace(scope, id);
      if (!trace) missed();
      return trace;
    };
    const reported = b.call('POST', '/v1/outcomes', { recall_id, pattern_key, passed: false, detail: 'off by one' }, auth);
    await bMissed;
    await a.app.deps.storage.settleRecallWrites();
    const res = await reported;
    expect(res.statusCode, res.body).toBeLessThan(300);
    expect(res.json()).toMatchObject({ recall_id, pattern_key, passed: false });
  });

  it('answers 404 when the trace never lands', async () => {
    const { b, auth, recall_id, pattern_key } = await twoProcesses();
    const res = await b.call('POST', '/v1/outcomes', { recall_id, pattern_key, passed: true }, auth);
    expect(res.statusCode).toBe(404);
  });
});
