import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUILTIN_REUSE_TIERS, readModelReuseTiers, resolveReuseTiers, writeModelReuseTiers,
} from '../../src/adapters/embeddings/model-tiers.js';
import { ConfigError } from '../../src/config/index.js';
import { startServer, type TestServer } from '../api/helpers.js';
import { TEST_MODEL_PATH, tempDir } from '../support/env.js';

const NONE = { duplicate: null, adapt: null };

describe('reuse-tier thresholds: env → model folder → built-in → spec', () => {
  let dir: { path: string; remove(): Promise<void> };
  beforeAll(async () => {
    dir = await tempDir('svc-tiers-');
    await writeFile(join(dir.path, 'config.json'), JSON.stringify({ model_type: 'bert', reuse_tiers: { duplicate: 0.81, adapt: 0.64 } }));
  });
  afterAll(() => dir.remove());

  it('takes the model folder over a built-in entry, and the environment over both, per threshold', async () => {
    const known = 'Xenova/all-MiniLM-L6-v2';
    expect(await resolveReuseTiers({ env: NONE, modelFolder: dir.path, modelId: known })).toEqual({
      duplicate: 0.81, adapt: 0.64, source: { duplicate: 'model_config', adapt: 'model_config' }, model: known,
      policy: 'fixed', policy_source: 'default',
    });
    expect(await resolveReuseTiers({ env: { duplicate: null, adapt: 0.5 }, modelFolder: dir.path, modelId: known })).toMatchObject({
      duplicate: 0.81, adapt: 0.5, source: { duplicate: 'model_config', adapt: 'env' },
    });
    expect(await resolveReuseTiers({ env: { duplicate: 0.99, adapt: 0.9 }, modelFolder: dir.path, modelId: known })).toMatchObject({
      duplicate: 0.99, adapt: 0.9, source: { duplicate: 'env', adapt: 'env' },
    });
  });

  it('reads tier_policy from the folder; SERVICE_TIER_POLICY, then thresholds set in the environment, override it', async () => {
    const folder = join(dir.path, 'calibrated');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'config.json'), JSON.stringify({ reuse_tiers: { duplicate: 0.98, adapt: 0.76 }, tier_policy: 'calibrated' }));
    expect(await resolveReuseTiers({ env: NONE, modelFolder: folder, modelId: 'm' })).toMatchObject({ policy: 'calibrated', policy_source: 'model_config' });
    expect(await resolveReuseTiers({ env: { ...NONE, policy: 'fixed' }, modelFolder: folder, modelId: 'm' })).toMatchObject({ policy: 'fixed', policy_source: 'env' });
    expect(await resolveReuseTiers({ env: { duplicate: null, adapt: 0.5 }, modelFolder: folder, modelId: 'm' })).toMatchObject({ policy: 'fixed', policy_source: 'env_thresholds' });
    await writeFile(join(folder, 'config.json'), JSON.stringify({ tier_policy: 'loose' }));
    await expect(resolveReuseTiers({ env: NONE, modelFolder: folder, modelId: 'm' })).rejects.toThrow(/tier_policy must be "fixed" or "calibrated"/);
  });

  it('falls back to a built-in entry for a known model, then to the spec', async () => {
    const hosted = await resolveReuseTiers({ env: NONE, modelFolder: null, modelId: 'text-embedding-3-small' });
    expect(hosted).toMatchObject({ ...BUILTIN_REUSE_TIERS['text-embedding-3-small'], source: { duplicate: 'builtin', adapt: 'builtin' } });
    const emptyFolder = join(dir.path, 'no-config');
    await mkdir(emptyFolder, { recursive: true });
    expect(await resolveReuseTiers({ env: NONE, modelFolder: emptyFolder, modelId: 'my-model' })).toEqual({
      duplicate: 0.92, adapt: 0.7, source: { duplicate: 'spec_default', adapt: 'spec_default' }, model: 'my-model',
      policy: 'fixed', policy_source: 'default',
    });
  });

  it('refuses an environment value that crosses the model’s other threshold, naming the variable', async () => {
    const err = await resolveReuseTiers({ env: { duplicate: null, adapt: 0.9 }, modelFolder: dir.path, modelId: 'm' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('SERVICE_TIER_ADAPT');
  });

  it('refuses a malformed reuse_tiers entry with the file named', async () => {
    const bad = join(dir.path, 'bad');
    await mkdir(bad, { recursive: true });
    await writeFile(join(bad, 'config.json'), JSON.stringify({ reuse_tiers: { duplicate: 0.5, adapt: 0.8 } }));
    await expect(readModelReuseTiers(bad)).rejects.toThrow(/bad\/config\.json: reuse_tiers: adapt must not exceed duplicate/);
  });

  it('writes reuse_tiers into config.json, keeping the other keys and leaving no temp file', async () => {
    const file = await writeModelReuseTiers(dir.path, { duplicate: 0.83, adapt: 0.66 });
    const written = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    expect(written).toEqual({ model_type: 'bert', reuse_tiers: { duplicate: 0.83, adapt: 0.66 } });
    expect((await readdir(dir.path)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    await writeModelReuseTiers(dir.path, { duplicate: 0.81, adapt: 0.64 });
  });
});

describe('a model folder carrying its own thresholds, through the server', () => {
  let model: { path: string; remove(): Promise<void> };
  let t: TestServer;
  beforeAll(async () => {
    // The offline model's files, plus a config.json of our own with reuse_tiers.
    model = await tempDir('svc-tiered-model-');
    const folder = join(model.path, 'tiered-model');
    await mkdir(folder);
    for (const name of await readdir(TEST_MODEL_PATH)) {
      if (name !== 'config.json') await symlink(join(TEST_MODEL_PATH, name), join(folder, name));
    }
    const base = JSON.parse(await readFile(join(TEST_MODEL_PATH, 'config.json'), 'utf8')) as object;
    await writeFile(join(folder, 'config.json'), JSON.stringify({ ...base, reuse_tiers: { duplicate: 0.99, adapt: 0.05 } }));
    t = await startServer({ SERVICE_EMBEDDING_MODEL_PATH: folder });
  });
  afterAll(async () => {
    await t.close();
    await model.remove();
  });

  it('deep health shows the thresholds in force and where they come from', async () => {
    const res = await t.call('GET', '/v1/health/deep');
    expect(res.json().reuse_tiers).toEqual({
      duplicate: 0.99, adapt: 0.05, source: { duplicate: 'model_config', adapt: 'model_config' }, model: 'tiered-model',
      // A copy of the bundled model's folder: its config.json names the calibrated policy.
      policy: 'calibrated', policy_source: 'model_config',
    });
  });

  it('recall computes tiers with the model’s thresholds', async () => {
    await t.call('POST', '/v1/learn', { task: 'parse a CSV file and sum one column', code: 'sum(col)', eval_score: 8 });
    const res = await t.call('POST', '/v1/recall', { task: 'render a bar chart of monthly sales', readonly: true });
    const [match] = res.json().matches as { similarity: number; reuse_tier: string }[];
    // Under the spec's 0.70 this unrelated pair would be fresh; the folder says adapt from 0.05.
    expect(match.similarity).toBeGreaterThanOrEqual(0.05);
    expect(match.similarity).toBeLessThan(0.7);
    expect(match.reuse_tier).toBe('adapt');
  });
});
