import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.js';
import { tempDir } from './env.js';
import { startServer, type ServerHandle } from './server.js';

/** What a test file gets from useServerWithFakeLlm (set once its beforeAll has run). */
export interface LlmServer {
  fake: FakeLlm;
  server: ServerHandle;
  dir: { path: string; remove(): Promise<void> };
}

/** The variables that point a provider's real SDK at the fake LLM server. */
export function fakeProviderEnv(fake: FakeLlm, provider: 'provider_a' | 'provider_b'): Record<string, string> {
  return provider === 'provider_a'
    ? { SERVICE_LLM_PROVIDER: provider, SERVICE_LLM_BASE_URL: fake.openaiBaseUrl, LLM_PROVIDER_A_API_KEY: 'test-key' }
    : { SERVICE_LLM_PROVIDER: provider, SERVICE_LLM_BASE_URL: fake.anthropicBaseUrl, LLM_PROVIDER_B_API_KEY: 'test-key' };
}

/**
 * For a CLI test file: a fake LLM and a real `service serve` child using it (provider_a, the
 * OpenAI SDK, unless told otherwise) on a fresh data path, started before the file's tests and
 * stopped after them. `env` adds server variables.
 */
export function useServerWithFakeLlm(
  prefix: string,
  options: { provider?: 'provider_a' | 'provider_b'; env?: Record<string, string> } = {},
): LlmServer {
  const ctx = {} as LlmServer;
  beforeAll(async () => {
    ctx.fake = await startFakeLlm();
    ctx.dir = await tempDir(prefix);
    ctx.server = await startServer({
      dataPath: join(ctx.dir.path, 'data'),
      env: { ...fakeProviderEnv(ctx.fake, options.provider ?? 'provider_a'), ...options.env },
    });
  });
  afterAll(async () => {
    await ctx.server?.stop();
    await ctx.fake?.close();
    await ctx.dir?.remove();
  });
  return ctx;
}
