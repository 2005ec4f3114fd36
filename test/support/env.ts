import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The embedding model every test loads: the bundled default, inside the checkout. */
export const TEST_MODEL_PATH = fileURLToPath(new URL('../../models/use-lite-static-m2v', import.meta.url));

/**
 * The same table in the transformers.js layout (int8 ONNX), a test fixture for the tests of
 * the transformers.js path and of the static/ONNX equivalence.
 */
export const TEST_ONNX_MODEL_PATH = fileURLToPath(new URL('../fixtures/models/use-lite-static-wordpiece', import.meta.url));

/**
 * A clean environment for child processes: the parent's PATH and friends, but no SERVICE_*,
 * provider keys or colour settings leaking in from the developer's shell; local embeddings
 * from the offline model; no LLM provider. `extra` wins over everything.
 */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(SERVICE_|LLM_PROVIDER_|OPENAI_|ANTHROPIC_|PAYMENT_|HF_)/.test(name)) continue;
    if (['NO_COLOR', 'FORCE_COLOR', 'CI'].includes(name)) continue;
    env[name] = value;
  }
  Object.assign(env, {
    SERVICE_LOCAL_EMBEDDINGS: '1',
    SERVICE_EMBEDDING_MODEL_PATH: TEST_MODEL_PATH,
    SERVICE_LLM_PROVIDER: 'none',
    SERVICE_LOG_LEVEL: 'warn',
  });
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** A fresh directory under the OS temp dir; remove() deletes it and everything inside. */
export async function tempDir(prefix = 'service-test-'): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
