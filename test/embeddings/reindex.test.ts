import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder, type CachedEmbedder } from '../../src/adapters/embeddings/index.js';
import { createJsonStorage } from '../../src/adapters/storage/json/index.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { PatternRecord, Scope } from '../../src/core/types.js';
import type { Embedder } from '../../src/ports/embedder.js';
import { systemClock } from '../../src/ports/clock.js';
import { noopInstruments, silentLogger } from '../../src/ports/observability.js';
import type { Storage } from '../../src/ports/storage.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { reindex } from '../../src/services/reindex.js';

import { TEST_MODEL_PATH as MODEL_PATH } from '../support/env.js';
const TEAM_A: Scope = { tenant_id: 'acme', project_id: 'default' };
const TEAM_B: Scope = { tenant_id: 'globex', project_id: 'etl' };

let dir: string;
let config: Config;
let storage: Storage;
let embedder: CachedEmbedder;

function record(i: number, task: string): PatternRecord {
  const at = new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
  return {
    id: `p${String(i).padStart(5, '0')}`, task, code: `solution ${i}`, output: null, eval_score: 8, success_score: 8,
    reuse_count: 0, run_id: null, classification: 'internal', source: 'api', author: null, expires_at: null,
    redacted: false, created_at: at, updated_at: at, last_aged_at: null,
  };
}

/** Vectors of the previous model (hosted, 1536-d), all one direction: useless for the new one. */
function staleVector(): Float32Array {
  const v = new Float32Array(1536);
  v[0] = 1;
  return v;
}

/** Passes calls through and remembers each batch size. */
function recordingBatches(inner: Embedder): Embedder & { batches: number[] } {
  const batches: number[] = [];
  return {
    batches,
    get info() {
      return inner.info;
    },
    embed(texts) {
      batches.push(texts.length);
      return inner.embed(texts);
    },
  };
}

const subjects = ['CSV files', 'invoices', 'log lines', 'thumbnails', 'webhooks', 'user records', 'sensor data'];
const verbs = ['parse', 'archive', 'compress', 'validate', 'deduplicate', 'export', 'index', 'summarize', 'encrypt', 'merge', 'sort'];
const teamATasks = Array.from({ length: 70 }, (_, i) => `${verbs[i % verbs.length]} ${subjects[i % subjects.length]} batch ${i}`);
const teamBTasks = ['send an email when the build fails', 'resize images in a folder', 'rotate database credentials'];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'reindex-'));
  config = loadConfig({ SERVICE_LOCAL_EMBEDDINGS: '1', SERVICE_EMBEDDING_MODEL_PATH: MODEL_PATH, SERVICE_DATA_PATH: dir });
  storage = await createJsonStorage({ dataPath: join(dir, 'data') });
  embedder = await createEmbedder(config, { logger: silentLogger, instruments: noopInstruments });
  let n = 0;
  for (const task of teamATasks) await storage.patterns.insert(TEAM_A, record(n++, task), staleVector());
  for (const task of teamBTasks) await storage.patterns.insert(TEAM_B, record(n++, task), staleVector());
  await storage.meta.setEmbeddingInfo({ provider: 'openai', model: 'text-embedding-3-small', dimension: 1536 });
});

afterAll(async () => {
  await storage?.close();
  await embedder?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('reindex', () => {
  it('refuses to search the old 1536-d vectors with the new model before reindexing', async () => {
    const [vector] = await embedder.embed([teamATasks[0]]);
    await expect(storage.patterns.search(TEAM_A, vector, 1)).rejects.toThrow(/reindex/);
  });

  it('re-embeds every pattern of every scope in batches of at most 64 and records the model', async () => {
    const batching = recordingBatches(embedder);
    const deps: ServiceDeps = {
      config, storage, embedder: batching, llm: null, clock: systemClock, logger: silentLogger, instruments: noopInstruments, keyStore: null,
    };
    const progress: Array<[number, number]> = [];
    const result = await reindex(deps, (done, total) => progress.push([done, total]));

    expect(result).toEqual({ patterns: 73 });
    expect(batching.batches.every((n) => n <= 64)).toBe(true);
    expect(batching.batches.reduce((a, b) => a + b, 0)).toBe(73);
    expect(progress[0]).toEqual([0, 73]);
    expect(progress.at(-1)).toEqual([73, 73]);
    expect(await storage.meta.getEmbeddingInfo()).toEqual({ provider: 'local', model: 'use-lite-static', dimension: 384 });
  });

  it('leaves vectors that find each pattern by its own task, within its own scope', async () => {
    for (const [scope, tasks] of [[TEAM_A, teamATasks], [TEAM_B, teamBTasks]] as const) {
      for (const task of [tasks[0], tasks[tasks.length - 1]]) {
        const [vector] = await embedder.embed([task]);
        const [best] = await storage.patterns.search(scope, vector, 1);
        expect(best.pattern.task).toBe(task);
        expect(best.similarity).toBeGreaterThan(0.99);
      }
    }
  });

  it('on an empty store records the model and reports zero', async () => {
    const emptyStorage = await createJsonStorage({ dataPath: join(dir, 'empty') });
    try {
      const deps: ServiceDeps = {
        config, storage: emptyStorage, embedder, llm: null, clock: systemClock, logger: silentLogger, instruments: noopInstruments, keyStore: null,
      };
      expect(await reindex(deps)).toEqual({ patterns: 0 });
      expect(await emptyStorage.meta.getEmbeddingInfo()).toEqual(embedder.info);
    } finally {
      await emptyStorage.close();
    }
  });
});
