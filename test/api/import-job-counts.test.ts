/**
 * Issue 25, 9: an import job's result adds up to what is stored even when two runs of the
 * same job overlap (a run taken over as stale while it was still writing, a restart while the
 * old process finishes): the slower run planned its writes before the faster one stored the
 * same records. Before, JSON counted them as imported again (silently replacing them) and
 * PostgreSQL failed the job with a conflict. Deterministic: the first run is held at its first
 * embedding (after planning, before any write) until the second run has finished.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../../src/ports/embedder.js';
import { systemContext } from '../../src/services/audit.js';
import { jobOperation } from '../../src/services/job-operations.js';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';

const hasPg = await requirePostgres('import job counts');
const database = perFileDatabase('importcounts');

const RECORDS = 150;
const scope = { tenant_id: 'default', project_id: 'default' };

/** An embedder whose first call waits for `release`; `held` resolves when that call arrives. */
function gatedEmbedder(real: Embedder) {
  let calls = 0;
  let release!: () => void;
  let arrived!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = new Promise<void>((resolve) => (arrived = resolve));
  const embedder: Embedder = {
    info: real.info,
    async embed(texts) {
      if (++calls === 1) {
        arrived();
        await gate;
      }
      return real.embed(texts);
    },
  };
  return { embedder, held, release };
}

async function overlappingRuns(h: Harness): Promise<void> {
  const op = jobOperation('import')!;
  const records = Array.from({ length: RECORDS }, (_, i) => ({ task: `Reconcile the invoice batch ${i} with the ledger`, code: `reconcile(${i})`, eval_score: 6 }));
  // A record that was there before the job: skipped by both runs.
  const input = { records: [{ key: 'patterns/kept0001', task: 'an older pattern', code: 'old()', eval_score: 5 }, ...records], overwrite: false };
  await op.run(h.app.deps, scope, { records: [input.records[0]], overwrite: false }, systemContext, { job_id: 'earlierjob0000000001' });

  const gated = gatedEmbedder(h.app.deps.embedder);
  Object.assign(h.app.deps, { embedder: gated.embedder });
  const jobId = 'overlapjob0000000001';
  const slow = op.run(h.app.deps, scope, input, systemContext, { job_id: jobId });
  await gated.held;
  const fast = await op.run(h.app.deps, scope, input, systemContext, { job_id: jobId });
  expect(fast).toEqual({ imported: RECORDS, skipped: 1, total: RECORDS + 1 });
  gated.release();
  // Everything the slow run planned was stored by the fast one meanwhile: none of it is its own.
  expect(await slow).toEqual({ imported: 0, skipped: RECORDS + 1, total: RECORDS + 1 });
  expect(await h.app.deps.storage.patterns.count(scope)).toBe(RECORDS + 1);
}

describe('two runs of one import job overlapping', () => {
  afterAll(() => database.drop());

  it('JSON: the later run counts the records stored meanwhile as skipped, not imported', async () => {
    const h = await jsonHarness();
    try {
      await overlappingRuns(h);
    } finally {
      await h.close();
    }
  });

  it.skipIf(!hasPg)('PostgreSQL: the later run counts the records stored meanwhile as skipped, and does not fail', async () => {
    const h = await pgHarness(database);
    try {
      await overlappingRuns(h);
    } finally {
      await h.close();
    }
  });
});
