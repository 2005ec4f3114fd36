import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';

/** A small labelled set: three tasks in three wordings, a lookalike each, three unrelated tasks. */
const SMALL_SET = {
  clusters: [
    { id: 'csv', wordings: ['sum a column of a CSV file', 'add up the values of one CSV column', 'csv column total'], lookalikes: ['write a CSV file with a total column'] },
    { id: 'email', wordings: ['validate an email address', 'check that an e-mail address is well formed', 'email format check'], lookalikes: ['send an email to an address'] },
    { id: 'sort', wordings: ['sort a list of numbers', 'order numeric values ascending', 'number sorting'], lookalikes: ['shuffle a list of numbers'] },
  ],
  unrelated: ['draw a spinning cube on a canvas', 'play a sound when a timer ends', 'train a regression model on house prices'],
};

describe('service calibrate', () => {
  let dir: { path: string; remove(): Promise<void> };
  let setFile: string;
  let modelFolder: string;
  beforeAll(async () => {
    dir = await tempDir('svc-calibrate-');
    setFile = join(dir.path, 'set.json');
    await writeFile(setFile, JSON.stringify(SMALL_SET));
    modelFolder = join(dir.path, 'model');
    await mkdir(modelFolder);
    await writeFile(join(modelFolder, 'config.json'), JSON.stringify({ model_type: 'model2vec', hidden_dim: 384 }));
  });
  afterAll(() => dir.remove());

  it('measures the configured model without a server and writes the thresholds into a model folder', async () => {
    const res = await runCli(['calibrate', setFile, '--write', modelFolder, '--rate', '0', '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout) as {
      set: Record<string, number>;
      calibrated: { thresholds: { duplicate: number; adapt: number }; unrelatedAtAdapt: { count: number } };
      current: { thresholds: { duplicate: number; adapt: number } };
      current_source: { duplicate: string; adapt: string };
      distributions: Record<string, { n: number }>;
      written: string;
    };
    expect(report.set).toEqual({ clusters: 3, stored: 6, queries: 3, lookalikes: 3, unrelated: 3 });
    expect(report.distributions.unrelated.n).toBe(3);
    // The bundled model carries its own calibrated thresholds in its folder.
    expect(report.current.thresholds).toEqual({ duplicate: 0.98, adapt: 0.76 });
    expect(report.current_source).toEqual({ duplicate: 'model_config', adapt: 'model_config' });
    // Rate 0: no unrelated task may reach adapt.
    expect(report.calibrated.unrelatedAtAdapt.count).toBe(0);
    const written = JSON.parse(await readFile(join(modelFolder, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(written).toEqual({ model_type: 'model2vec', hidden_dim: 384, reuse_tiers: report.calibrated.thresholds });
  });

  it('uses thresholds from the environment as the ones in force', async () => {
    const res = await runCli(['calibrate', setFile, '--json'], { env: { SERVICE_TIER_ADAPT: '0.5' } });
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout) as { current: { thresholds: { adapt: number } }; current_source: { adapt: string } };
    expect(report.current.thresholds.adapt).toBe(0.5);
    expect(report.current_source.adapt).toBe('env');
    // A threshold set in the environment means the fixed policy.
    expect((report as unknown as { tier_policy: unknown }).tier_policy).toEqual({ policy: 'fixed', duplicate_threshold: 0.98, adapt_threshold: 0.5, source: 'env' });
  });

  it('shows the calibrated policy a project of the stored wordings would get', async () => {
    const small = JSON.parse((await runCli(['calibrate', setFile, '--json'])).stdout) as { tier_policy: unknown };
    expect(small.tier_policy).toEqual({ policy: 'calibrated', duplicate_threshold: null, adapt_threshold: 0.76, source: 'small_project_fallback' });
    const full = await runCli(['calibrate', 'test/fixtures/calibration/programming-tasks.json', '--json']);
    expect(full.code).toBe(0);
    const policy = (JSON.parse(full.stdout) as { tier_policy: { policy: string; source: string; adapt_threshold: number } }).tier_policy;
    expect(policy).toMatchObject({ policy: 'calibrated', source: 'project_fit' });
    expect(policy.adapt_threshold).toBeGreaterThan(0);
    expect(policy.adapt_threshold).toBeLessThan(0.76);
  });

  it('takes --format table|json like the other commands, whatever stdout is', async () => {
    const table = await runCli(['calibrate', setFile, '--format', 'table']);
    expect(table.code).toBe(0);
    expect(() => JSON.parse(table.stdout)).toThrow();
    expect(table.stdout).toMatch(/duplicate/);
    const json = await runCli(['calibrate', setFile, '--format', 'json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toHaveProperty('calibrated.thresholds');
    const wrong = await runCli(['calibrate', setFile, '--format', 'yaml']);
    expect(wrong.code).toBe(2);
  });

  it('refuses a malformed set, a bad rate and a missing folder with exit 2', async () => {
    const bad = join(dir.path, 'bad.json');
    await writeFile(bad, JSON.stringify({ clusters: [{ id: 'x', wordings: ['only one'] }] }));
    const malformed = await runCli(['calibrate', bad]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/clusters\.0\.wordings: a cluster needs at least two wordings/);
    expect((await runCli(['calibrate', setFile, '--rate', '1.5'])).code).toBe(2);
    const missing = await runCli(['calibrate', setFile, '--write', join(dir.path, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/not a model folder/);
  });
});
