/**
 * A key's max_patterns holds for imports sent at once, as it does for learns: each batch is
 * checked and written under the scope lock learn holds (on PostgreSQL an advisory lock in the
 * database, so two server processes queue too). The refused import answers 429 with the
 * counts it had written. The embedder is gated so that every import has passed the
 * whole-request check before any of them writes: the race happens every run, not by chance.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { Embedder } from '../../src/ports/embedder.js';
import { tempDir } from '../support/env.js';
import { requirePostgres } from '../support/pg.js';
import { NO_RATE_LIMITS } from './both-storages.js';
import { bearer, perFileDatabase, provisionKey, startDbServer, type DbServer } from './db-auth-helpers.js';

const hasPg = await requirePostgres('import quota race');
const database = perFileDatabase('importquota');
const SCOPE = { tenant_id: 'default', project_id: 'default' };

const records = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `patterns/${prefix}${i}`, task: `${prefix} imported task number ${i}`, code: `f${i}()`, eval_score: 5 }));

/** Wraps each server's embedder: `gate(texts)` runs before the real embedding. */
function gateEmbedders(servers: DbServer[], gate: (texts: string[]) => Promise<void>): void {
  for (const s of servers) {
    const real = s.app.deps.embedder;
    const gated: Embedder = { info: real.info, embed: async (texts) => (await gate(texts), real.embed(texts)) };
    Object.assign(s.app.deps, { embedder: gated });
  }
}

/** Resolves every waiter once `n` have arrived. */
function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return () => {
    if (++arrived === n) open();
    return opened;
  };
}

async function sixImportsOfThree(servers: DbServer[]): Promise<void> {
  const auth = bearer((await provisionKey(servers[0].keyStore, { ...SCOPE, role: 'editor', max_patterns: 3 })).secret);
  const arrive = barrier(6);
  gateEmbedders(servers, () => arrive());
  const answers = await Promise.all(
    Array.from({ length: 6 }, (_, i) => servers[i % servers.length].call('POST', '/v1/import', { records: records(`r${i}x`, 3) }, auth)),
  );
  const stored = await servers[0].app.deps.storage.patterns.count(SCOPE);
  expect(stored).toBe(3);
  const ok = answers.filter((a) => a.statusCode === 200);
  const refused = answers.filter((a) => a.statusCode === 429);
  expect(ok.map((a) => a.json())).toEqual([{ imported: 3, skipped: 0, total: 3 }]);
  expect(refused).toHaveLength(5);
  for (const a of refused) {
    expect(a.json()).toMatchObject({
      code: 'quota_exceeded', error: 'quota_exceeded', metric: 'patterns', current: 3, limit: 3,
      imported: 0, skipped: 0, total: 3, last_written: null,
    });
  }
}

describe.skipIf(!hasPg)('parallel imports under a key quota', () => {
  const opened: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const o of opened.reverse()) await o.close();
    await database.drop();
  });

  async function jsonServer(): Promise<DbServer> {
    const dir = await tempDir('svc-import-quota-');
    opened.push({ close: dir.remove });
    const t = await startDbServer((await database.schema()).url, { ...NO_RATE_LIMITS, SERVICE_STORAGE: 'json', SERVICE_DATA_PATH: dir.path }, {}, { runJobs: false });
    opened.push(t);
    return t;
  }

  it('JSON: 6 imports of 3 records at once under max_patterns 3 store 3; the other 5 answer 429 with their counts', async () => {
    await sixImportsOfThree([await jsonServer()]);
  });

  it('PostgreSQL: the same, split over two server processes (apps) sharing the database', async () => {
    const url = (await database.schema()).url;
    const env = { ...NO_RATE_LIMITS, SERVICE_DB_POOL_MAX: '3' };
    const one = await startDbServer(url, env, {}, { runJobs: false });
    opened.push(one);
    const two = await startDbServer(url, env, {}, { runJobs: false });
    opened.push(two);
    await sixImportsOfThree([one, two]);
  });

  it('an import passing the quota between its batches stops there: 429 with the records it wrote', async () => {
    const t = await jsonServer();
    const auth = bearer((await provisionKey(t.keyStore, { ...SCOPE, role: 'editor', max_patterns: 67 })).secret);
    // A: 66 records (batches of 64 and 2); B: 3 records, written between A's two batches.
    let firstBatchOfA!: () => void;
    const aWroteItsFirstBatch = new Promise<void>((resolve) => (firstBatchOfA = resolve));
    const pending: { answerOfB?: Promise<LightMyRequestResponse> } = {};
    let embedsOfA = 0;
    gateEmbedders([t], async (texts) => {
      if (texts[0].startsWith('B ')) return aWroteItsFirstBatch;
      if (++embedsOfA === 2) {
        firstBatchOfA();
        await pending.answerOfB;
      }
    });
    const a = t.call('POST', '/v1/import', { records: records('A ', 66).map((r, i) => ({ ...r, key: `patterns/a${i}` })) }, auth);
    const answerOfB = t.call('POST', '/v1/import', { records: records('B ', 3).map((r, i) => ({ ...r, key: `patterns/b${i}` })) }, auth);
    pending.answerOfB = answerOfB;
    expect((await answerOfB).json()).toEqual({ imported: 3, skipped: 0, total: 3 });
    const refused = await a;
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({
      code: 'quota_exceeded', current: 67, limit: 67, imported: 64, skipped: 0, total: 66, last_written: { index: 63, key: 'patterns/a63' },
    });
    expect(await t.app.deps.storage.patterns.count(SCOPE)).toBe(67);
  });
});
