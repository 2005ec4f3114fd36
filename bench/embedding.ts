import { StaticEmbedder } from '../src/adapters/embeddings/static.js';
import { importTransformers, TransformersEmbedder } from '../src/adapters/embeddings/transformers.js';
import { BUNDLED_MODEL_ID } from '../src/core/embedding-model.js';
import { median } from '../src/core/stats.js';
import { syntheticRuns } from './synthetic.js';

export interface EmbeddingLatency {
  /** Which code path embedded: the static table reader or transformers.js + onnxruntime. */
  path: 'static' | 'transformers.js';
  folder: string;
  model: string;
  dimension: number;
  loadMs: number;
  /** CPU time of the load (wall time on a busy machine includes waiting for a core). */
  loadCpuMs: number;
  single: { runs: number; medianUs: number };
  batch: { size: number; runs: number; medianUsPerTask: number; tasksPerSecond: number; cpuUsPerTask: number };
}

interface Loadable {
  load(): Promise<{ model: string; dimension: number }>;
  embed(texts: string[]): Promise<Float32Array[]>;
  close?(): Promise<void>;
}

const SINGLE_RUNS = 1000;
const BATCH_SIZE = 64;
const BATCH_RUNS = 30;
const WARMUP_RUNS = 20;

/**
 * Raw embedding latency (no cache in front) of the static path on `folder` (model2vec layout)
 * and, when transformers.js is installed and `onnxFolder` is given, of the transformers.js
 * path on the same table in the ONNX layout: µs per task one at a time, and per task in
 * batches of 64, each the median over runs with texts never embedded before.
 */
export async function measureEmbeddings(folder: string, onnxFolder: string | null, seed: number): Promise<EmbeddingLatency[]> {
  const results = [await measure('static', folder, new StaticEmbedder({ folder, modelId: BUNDLED_MODEL_ID }), seed)];
  if (onnxFolder) {
    const transformers = await importTransformers('the ONNX comparison').catch(() => null);
    if (transformers) {
      const onnx = new TransformersEmbedder({ transformers, modelId: BUNDLED_MODEL_ID, model: 'unused', modelPath: onnxFolder, cacheDir: onnxFolder });
      results.push(await measure('transformers.js', onnxFolder, onnx, seed));
    }
  }
  return results;
}

async function measure(path: EmbeddingLatency['path'], folder: string, embedder: Loadable, seed: number): Promise<EmbeddingLatency> {
  try {
    const loadStarted = performance.now();
    const loadCpu = process.cpuUsage();
    const info = await embedder.load();
    const loadMs = performance.now() - loadStarted;
    const loadCpuUsed = process.cpuUsage(loadCpu);
    const loadCpuMs = (loadCpuUsed.user + loadCpuUsed.system) / 1000;

    const texts = syntheticRuns(seed + 7, WARMUP_RUNS + SINGLE_RUNS + (WARMUP_RUNS + BATCH_RUNS) * BATCH_SIZE).map((r) => r.task);
    let next = 0;
    const take = (n: number): string[] => texts.slice(next, (next += n));
    const timeUs = async (batch: string[]): Promise<number> => {
      const started = performance.now();
      await embedder.embed(batch);
      return (performance.now() - started) * 1000;
    };
    for (let i = 0; i < WARMUP_RUNS; i++) await timeUs(take(1));
    const single: number[] = [];
    for (let i = 0; i < SINGLE_RUNS; i++) single.push(await timeUs(take(1)));
    for (let i = 0; i < WARMUP_RUNS; i++) await timeUs(take(BATCH_SIZE));
    const batch: number[] = [];
    // CPU time of the process (every thread) as well as wall time: on a busy shared machine a
    // long batch is preempted, which inflates wall time but not the work done.
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < BATCH_RUNS; i++) batch.push((await timeUs(take(BATCH_SIZE))) / BATCH_SIZE);
    const cpu = process.cpuUsage(cpuBefore);

    const perTask = median(batch);
    return {
      path, folder, model: info.model, dimension: info.dimension, loadMs, loadCpuMs,
      single: { runs: SINGLE_RUNS, medianUs: median(single) },
      batch: {
        size: BATCH_SIZE, runs: BATCH_RUNS, medianUsPerTask: perTask, tasksPerSecond: 1e6 / perTask,
        cpuUsPerTask: (cpu.user + cpu.system) / (BATCH_RUNS * BATCH_SIZE),
      },
    };
  } finally {
    await embedder.close?.();
  }
}
