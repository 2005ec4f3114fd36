import { LocalEmbedder } from '../src/adapters/embeddings/local.js';
import { median } from '../src/core/stats.js';
import { syntheticRuns } from './synthetic.js';

export interface EmbeddingLatency {
  model: string;
  dimension: number;
  loadMs: number;
  single: { runs: number; medianMs: number };
  batch: { size: number; runs: number; medianMs: number; sentencesPerSecond: number };
}

const SINGLE_RUNS = 200;
const BATCH_SIZE = 64;
const BATCH_RUNS = 30;
const WARMUP_RUNS = 5;

/**
 * Raw model latency (no cache in front): one sentence, and a batch of 64, each the median
 * over runs with texts never embedded before in this process.
 */
export async function measureEmbedding(modelPath: string, seed: number): Promise<EmbeddingLatency> {
  const embedder = new LocalEmbedder({ model: 'unused', modelPath, cacheDir: modelPath });
  try {
    const loadStarted = performance.now();
    const info = await embedder.load();
    const loadMs = performance.now() - loadStarted;

    const texts = syntheticRuns(seed + 7, WARMUP_RUNS + SINGLE_RUNS + (WARMUP_RUNS + BATCH_RUNS) * BATCH_SIZE).map((r) => r.task);
    let next = 0;
    const take = (n: number): string[] => texts.slice(next, (next += n));

    const timeOnce = async (batch: string[]): Promise<number> => {
      const started = performance.now();
      await embedder.embed(batch);
      return performance.now() - started;
    };
    for (let i = 0; i < WARMUP_RUNS; i++) await timeOnce(take(1));
    const single: number[] = [];
    for (let i = 0; i < SINGLE_RUNS; i++) single.push(await timeOnce(take(1)));
    for (let i = 0; i < WARMUP_RUNS; i++) await timeOnce(take(BATCH_SIZE));
    const batch: number[] = [];
    for (let i = 0; i < BATCH_RUNS; i++) batch.push(await timeOnce(take(BATCH_SIZE)));

    const batchMedian = median(batch);
    return {
      model: info.model,
      dimension: info.dimension,
      loadMs,
      single: { runs: SINGLE_RUNS, medianMs: median(single) },
      batch: { size: BATCH_SIZE, runs: BATCH_RUNS, medianMs: batchMedian, sentencesPerSecond: (BATCH_SIZE * 1000) / batchMedian },
    };
  } finally {
    await embedder.close();
  }
}
