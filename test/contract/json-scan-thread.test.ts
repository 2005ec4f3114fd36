import { mkdtemp, rm } from 'node:fs/promises';
import os, { availableParallelism } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createJsonStorage, type JsonStorage } from '../../src/adapters/storage/json/index.js';
import { defaultScanThread } from '../../src/adapters/storage/json/engine/scan-thread.js';
import type { HybridQuery } from '../../src/core/hybrid.js';
import { makePattern, SCOPE_A } from './storage.contract.fixtures.js';

/** 3,000 patterns: past the size where the JSON store scans its int8 copy (and may hand the scan to its thread). */
const PATTERNS = 3_000;
const DIM = 64;

function unitVector(seed: number): Float32Array {
  const v = Float32Array.from({ length: DIM }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233) * 43758.5453 % 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

describe('JSON storage: hybrid searches under way together (the scan thread)', () => {
  let dir: string;
  let storage: JsonStorage;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'json-scan-thread-'));
    storage = await createJsonStorage({ dataPath: dir });
    const writes = Array.from({ length: PATTERNS }, (_, n) => ({
      record: makePattern(n, { task: `task ${n % 97} about topic ${n % 13}` }),
      vector: unitVector(n),
      replace: false,
    }));
    await storage.patterns.writeBatch!(SCOPE_A, writes);
  });

  afterAll(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  // One core: there is no thread by design (docs/behavior.md "Recall" 4).
  it.runIf(availableParallelism() > 1)('answer as the same searches one at a time do, the thread taking some of them', async () => {
    const thread = defaultScanThread()!;
    expect(thread).not.toBeNull();
    const scans = vi.spyOn(thread, 'scan');
    const queries: HybridQuery[] = Array.from({ length: 8 }, (_, i) => ({
      vector: unitVector(100_000 + i), terms: ['topic', String(i)], vectorK: 20, keywordK: 10, evalWindow: 5,
    }));
    const alone = [];
    for (const q of queries) alone.push(await storage.patterns.hybridCandidates(SCOPE_A, q));
    expect(scans).not.toHaveBeenCalled(); // one at a time: each stays on the main thread
    const together = await Promise.all(queries.map((q) => storage.patterns.hybridCandidates(SCOPE_A, q)));
    expect(scans).toHaveBeenCalled();
    const answers = await Promise.all(scans.mock.results.map((r) => r.value as ReturnType<typeof thread.scan>));
    expect(answers.filter((a) => a !== null).length).toBeGreaterThan(0); // the thread answered, not only the fallback
    expect(together).toEqual(alone);
    scans.mockRestore();
  });
});
