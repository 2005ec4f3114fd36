import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../config/index.js';
import { ReuseTiersFile, TierPolicyFile } from '../../contracts/calibration.js';
import { SPEC_TIERS } from '../../core/similarity.js';
import type { ReuseTierSettings, TierSource, TierThresholds } from '../../core/types.js';

/**
 * Reuse-tier thresholds belong to the embedding model: every model spreads similarities
 * differently. Resolved once at startup, per threshold, in this order:
 *   1. SERVICE_TIER_DUPLICATE / SERVICE_TIER_ADAPT (the operator's word wins);
 *   2. `reuse_tiers: {duplicate, adapt}` in the model folder's config.json (either layout:
 *      transformers.js or model2vec; `service calibrate --write` puts it there);
 *   3. a built-in entry for a known hosted or hub model;
 *   4. the spec's 0.92 / 0.70.
 * Tiers are computed at recall time from raw similarity, so a change needs no migration.
 */

/**
 * Known models. MiniLM-class models are what the spec's thresholds were set for. The hosted
 * OpenAI models were not measured here (no network): the v3 models put unrelated texts far
 * lower than MiniLM (~0.1–0.3) and paraphrases ~0.6–0.9, ada-002 squeezes everything into
 * ~0.7–1.0; these are starting points, `service calibrate` on your own tasks is better.
 */
export const BUILTIN_REUSE_TIERS: Readonly<Record<string, TierThresholds>> = Object.freeze({
  'Xenova/all-MiniLM-L6-v2': { duplicate: 0.92, adapt: 0.7 },
  'sentence-transformers/all-MiniLM-L6-v2': { duplicate: 0.92, adapt: 0.7 },
  'text-embedding-3-small': { duplicate: 0.85, adapt: 0.55 },
  'text-embedding-3-large': { duplicate: 0.85, adapt: 0.55 },
  'text-embedding-ada-002': { duplicate: 0.95, adapt: 0.85 },
});

export interface ResolveInput {
  /** The environment's values (null: variable not set). */
  env: { duplicate: number | null; adapt: number | null; policy?: 'fixed' | 'calibrated' | null };
  /** The local model's folder, if the model was loaded from one. */
  modelFolder: string | null;
  /** The embedder's model id (hub id, hosted name or folder name). */
  modelId: string;
}

export async function resolveReuseTiers(input: ResolveInput): Promise<ReuseTierSettings> {
  const fromFolder = input.modelFolder ? await readModelReuseTiers(input.modelFolder) : null;
  const builtin = BUILTIN_REUSE_TIERS[input.modelId] ?? null;
  const pick = (name: keyof TierThresholds): [number, TierSource] => {
    const env = input.env[name];
    if (env !== null) return [env, 'env'];
    if (fromFolder) return [fromFolder[name], 'model_config'];
    if (builtin) return [builtin[name], 'builtin'];
    return [SPEC_TIERS[name], 'spec_default'];
  };
  const [duplicate, duplicateSource] = pick('duplicate');
  const [adapt, adaptSource] = pick('adapt');
  if (adapt > duplicate) {
    // One of them must come from the environment (a folder's pair is validated as a pair).
    const variable = adaptSource === 'env' ? 'SERVICE_TIER_ADAPT' : 'SERVICE_TIER_DUPLICATE';
    throw new ConfigError(variable, `adapt threshold ${adapt} (${adaptSource}) exceeds duplicate threshold ${duplicate} (${duplicateSource})`);
  }
  const folderPolicy = input.modelFolder ? await readModelTierPolicy(input.modelFolder) : null;
  const [policy, policySource] = pickPolicy(input.env, folderPolicy);
  return { duplicate, adapt, source: { duplicate: duplicateSource, adapt: adaptSource }, model: input.modelId, policy, policy_source: policySource };
}

/**
 * The tier policy: SERVICE_TIER_POLICY, else `fixed` when the operator set a threshold (they
 * asked for thresholds), else the model folder's `tier_policy`, else `fixed`.
 */
function pickPolicy(env: ResolveInput['env'], fromFolder: 'fixed' | 'calibrated' | null): ['fixed' | 'calibrated', NonNullable<ReuseTierSettings['policy_source']>] {
  if (env.policy) return [env.policy, 'env'];
  if (env.duplicate !== null || env.adapt !== null) return ['fixed', 'env_thresholds'];
  if (fromFolder) return [fromFolder, 'model_config'];
  return ['fixed', 'default'];
}

/** `tier_policy` of a model folder's config.json; null when the file or the entry is absent. */
export async function readModelTierPolicy(folder: string): Promise<'fixed' | 'calibrated' | null> {
  const file = join(folder, 'config.json');
  const config = await readConfigJson(file);
  if (config === null || config.tier_policy === undefined) return null;
  const parsed = TierPolicyFile.safeParse(config.tier_policy);
  if (!parsed.success) throw new ConfigError('SERVICE_EMBEDDING_MODEL_PATH', `${file}: tier_policy must be "fixed" or "calibrated"`);
  return parsed.data;
}

/** `reuse_tiers` of a model folder's config.json; null when the file or the entry is absent. */
export async function readModelReuseTiers(folder: string): Promise<TierThresholds | null> {
  const file = join(folder, 'config.json');
  const config = await readConfigJson(file);
  if (config === null || config.reuse_tiers === undefined) return null;
  const parsed = ReuseTiersFile.safeParse(config.reuse_tiers);
  if (!parsed.success) {
    throw new ConfigError('SERVICE_EMBEDDING_MODEL_PATH', `${file}: reuse_tiers: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  }
  return parsed.data;
}

/**
 * Stores thresholds as `reuse_tiers` in the folder's config.json, keeping every other key.
 * Written to a temp file, flushed, then renamed over: the model's config is never torn.
 */
export async function writeModelReuseTiers(folder: string, tiers: TierThresholds): Promise<string> {
  const file = join(folder, 'config.json');
  const config = (await readConfigJson(file)) ?? {};
  config.reuse_tiers = { duplicate: tiers.duplicate, adapt: tiers.adapt };
  const temp = join(folder, `.config.json.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx');
  try {
    await handle.writeFile(`${JSON.stringify(config, null, 2)}\n`, 'utf8');
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  await rename(temp, file);
  return file;
}

async function readConfigJson(file: string): Promise<Record<string, unknown> | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigError('SERVICE_EMBEDDING_MODEL_PATH', `${file} is not valid JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError('SERVICE_EMBEDDING_MODEL_PATH', `${file} must hold a JSON object`);
  }
  return value as Record<string, unknown>;
}
