import * as transformers from '@huggingface/transformers';
import { afterAll, describe, expect, it } from 'vitest';
import { StaticEmbedder } from '../../src/adapters/embeddings/static.js';
import { TransformersEmbedder } from '../../src/adapters/embeddings/transformers.js';
import { embeddingCorpus } from '../fixtures/embedding-corpus.js';
import { TEST_MODEL_PATH, TEST_ONNX_MODEL_PATH } from '../support/env.js';

/**
 * The bundled static model (model2vec layout, read in plain code) and the same table as an
 * int8 ONNX model read through transformers.js give the same vectors: this is what lets a
 * store written with one open with the other without a reindex.
 */
const staticPath = new StaticEmbedder({ folder: TEST_MODEL_PATH, modelId: 'use-lite-static' });
const onnxPath = new TransformersEmbedder({
  transformers, modelId: 'use-lite-static', model: 'unused', modelPath: TEST_ONNX_MODEL_PATH, cacheDir: TEST_ONNX_MODEL_PATH, batchSize: 16,
});
afterAll(async () => { await onnxPath.close(); });

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

describe('static path vs transformers.js path on the same table', () => {
  it('agree to a cosine of 0.9999 or better over the fixture corpus', async () => {
    const corpus = embeddingCorpus();
    expect(corpus.length).toBeGreaterThanOrEqual(400);
    expect(corpus.some((t) => t.length > 10_000)).toBe(true);
    const [mine, theirs] = await Promise.all([staticPath.embed(corpus), onnxPath.embed(corpus)]);
    expect(staticPath.info).toEqual(onnxPath.info);
    let worst = { cosine: 1, text: '' };
    let bothZero = 0;
    for (let i = 0; i < corpus.length; i++) {
      const a = mine[i];
      const b = theirs[i];
      expect(a.every(Number.isFinite)).toBe(true);
      const zeroA = a.every((x) => x === 0);
      const zeroB = b.every((x) => x === 0);
      // Text of unknown tokens only: no direction on either path.
      expect(zeroA, `${corpus[i]} -> ${b.slice(0, 4).join(",")}`).toBe(zeroB);
      if (zeroA) { bothZero++; continue; }
      const cosine = dot(a, b);
      if (cosine < worst.cosine) worst = { cosine, text: corpus[i].slice(0, 80) };
    }
    expect(bothZero).toBeGreaterThan(0);
    expect(worst.cosine, `worst text: ${worst.text}`).toBeGreaterThanOrEqual(0.9999);
  });
});
