import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StaticEmbedder } from '../../src/adapters/embeddings/static.js';
import { CalibrationSetFile } from '../../src/contracts/calibration.js';
import { SPEC_TIERS } from '../../src/core/similarity.js';
import { calibrate, type CalibrationReport } from '../../src/services/calibrate.js';
import { TEST_MODEL_PATH, tempDir } from '../support/env.js';

const SET_FILE = new URL('../fixtures/calibration/programming-tasks.json', import.meta.url);

/**
 * The thresholds computed from the project's set for the bundled static model. They are
 * shipped in models/use-lite-static-m2v/config.json as reuse_tiers; this test keeps them honest.
 */
const BUNDLED_MODEL_TIERS = { duplicate: 0.98, adapt: 0.76 };

describe('the project calibration set on the bundled model', () => {
  let embedder: StaticEmbedder;
  let cache: { path: string; remove(): Promise<void> };
  let set: CalibrationSetFile;
  let report: CalibrationReport;
  beforeAll(async () => {
    cache = await tempDir();
    embedder = new StaticEmbedder({ folder: TEST_MODEL_PATH, modelId: 'use-lite-static', origin: 'the bundled model' });
    set = CalibrationSetFile.parse(JSON.parse(await readFile(SET_FILE, 'utf8')));
    report = await calibrate(embedder, set, SPEC_TIERS, { rate: 0.05 });
  });
  afterAll(async () => {
    await embedder.close();
    await cache.remove();
  });

  it('ships exactly these thresholds in the bundled model folder', async () => {
    const config = JSON.parse(await readFile(new URL('config.json', `file://${TEST_MODEL_PATH}/`), 'utf8'));
    expect(config.reuse_tiers).toEqual(BUNDLED_MODEL_TIERS);
  });

  it('is big enough to calibrate: ≥ 50 tasks in several wordings, lookalikes and unrelated tasks', () => {
    expect(set.clusters.length).toBeGreaterThanOrEqual(50);
    expect(Math.min(...set.clusters.map((c) => c.wordings.length))).toBeGreaterThanOrEqual(4);
    expect(report.set.lookalikes).toBeGreaterThanOrEqual(50);
    expect(report.set.unrelated).toBeGreaterThanOrEqual(40);
    // The default split stores all but the last wording of each task.
    expect(report.set).toMatchObject({ stored: set.clusters.length * 3, queries: set.clusters.length });
  });

  it('derives the thresholds shipped for the bundled model, meeting the targets at its size', () => {
    expect(report.calibrated.thresholds).toEqual(BUNDLED_MODEL_TIERS);
    expect(report.calibrated.unrelatedAtAdapt.share).toBeLessThanOrEqual(0.05);
    expect(report.calibrated.lookalikesAtDuplicate.share).toBeLessThanOrEqual(0.05);
    // The spec's thresholds do not: this is why the model carries its own.
    expect(report.current.unrelatedAtAdapt.share).toBeGreaterThan(0.05);
    expect(report.current.lookalikesAtDuplicate.share).toBeGreaterThan(0.05);
  });

  it('reports distributions whose order makes sense for a bag-of-words model', () => {
    const d = report.distributions;
    expect(d.true_match.n).toBe(report.set.queries);
    expect(d.true_match.p50!).toBeGreaterThan(d.unrelated.p50!);
    expect(report.precision_at_1.of).toBe(report.set.queries);
    expect(report.precision_at_1.correct).toBeGreaterThan(0);
  });
});
