import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Which code reads a local model folder. The folder's config.json tells: the model2vec layout
 * (`model_type: "model2vec"`, a static table in model.safetensors) is read in plain code;
 * anything else is a transformers.js folder (config.json of a transformer, onnx/ weights).
 */
export type ModelLayout = 'model2vec' | 'transformers';

/** The bundled default model's folder inside the package. */
export const BUNDLED_MODEL_FOLDER = 'models/use-lite-static-m2v';

export async function detectLayout(folder: string): Promise<ModelLayout> {
  let config: unknown;
  try {
    config = JSON.parse(await readFile(join(folder, 'config.json'), 'utf8'));
  } catch {
    // No readable config.json: the static reader names the missing or broken file precisely.
    return existsSync(join(folder, 'onnx')) ? 'transformers' : 'model2vec';
  }
  return isModel2VecConfig(config) ? 'model2vec' : 'transformers';
}

/** A model2vec config.json (unknown keys, e.g. `reuse_tiers`, are ignored). */
export function isModel2VecConfig(config: unknown): boolean {
  if (config === null || typeof config !== 'object') return false;
  const { model_type: type, architectures } = config as { model_type?: unknown; architectures?: unknown };
  return type === 'model2vec' || (Array.isArray(architectures) && architectures.includes('StaticModel'));
}

/**
 * The bundled model folder. Searched upwards from this file because it runs both from source
 * (src/adapters/embeddings) and compiled (dist/src/adapters/embeddings).
 */
export function bundledModelPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, BUNDLED_MODEL_FOLDER);
    if (existsSync(join(candidate, 'model.safetensors'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`the bundled embedding model (${BUNDLED_MODEL_FOLDER}) is missing from the installation; reinstall the package`);
}
