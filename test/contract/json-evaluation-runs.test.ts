import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createJsonStorage, type JsonStorage } from '../../src/adapters/storage/json/index.js';
import { makeCase, makeRun, runId } from './storage.contract.evaluation-runs.js';
import { SCOPE_A } from './storage.contract.js';

let dir = '';
let storage: JsonStorage | null = null;

afterEach(async () => {
  await storage?.close();
  storage = null;
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('JSON storage keeps evaluation runs and cases across a snapshot and a reopen', async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'json-eval-runs-'));
  storage = await createJsonStorage({ dataPath: dir });
  await storage.evaluationRuns.putRuns(SCOPE_A, [makeRun(1, { blessed: true }), makeRun(2)]);
  await storage.evaluationRuns.putCase(SCOPE_A, runId(1), makeCase('b'));
  await storage.evaluationRuns.putCase(SCOPE_A, runId(1), makeCase('a'));
  await storage.compact();
  // After the snapshot: journal lines on top of it.
  await storage.evaluationRuns.putCase(SCOPE_A, runId(1), makeCase('b', { median: 3 }));
  await storage.evaluationRuns.putRuns(SCOPE_A, [makeRun(3)]);
  await storage.evaluationRuns.deleteRuns(SCOPE_A, [runId(2)]);
  const runs = await storage.evaluationRuns.listRuns(SCOPE_A, { limit: 10 });
  const cases = await storage.evaluationRuns.listCases(SCOPE_A, runId(1));
  await storage.close();

  storage = await createJsonStorage({ dataPath: dir });
  expect(await storage.evaluationRuns.listRuns(SCOPE_A, { limit: 10 })).toEqual(runs);
  expect(await storage.evaluationRuns.listCases(SCOPE_A, runId(1))).toEqual(cases);
  expect(cases.map((c) => [c.case_id, c.median])).toEqual([['b', 3], ['a', 7]]);
  expect(runs.map((r) => r.id)).toEqual([runId(3), runId(1)]);
});
