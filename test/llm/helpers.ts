import { loadConfig, type Config, type Env } from '../../src/config/index.js';
import { createLlm } from '../../src/adapters/llm/index.js';
import type { Llm } from '../../src/ports/llm.js';
import { noopInstruments, silentLogger, type Instruments } from '../../src/ports/observability.js';
import { reply, type FakeLlm } from '../fixtures/fake-llm/server.js';
import { startServer, type TestServer } from '../api/helpers.js';

export const PROVIDERS = ['provider_a', 'provider_b'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** Config for a provider pointed at the fake server (the SDK's own base URL convention). */
export function llmEnv(fake: FakeLlm, provider: ProviderName, extra: Env = {}): Env {
  return {
    SERVICE_LLM_PROVIDER: provider,
    SERVICE_LLM_BASE_URL: provider === 'provider_a' ? fake.openaiBaseUrl : fake.anthropicBaseUrl,
    LLM_PROVIDER_A_API_KEY: 'test-key-a',
    LLM_PROVIDER_B_API_KEY: 'test-key-b',
    SERVICE_LOCAL_EMBEDDINGS: '1',
    SERVICE_LLM_TIMEOUT: '5',
    ...extra,
  };
}

/** Short backoff so retry tests take milliseconds; Retry-After still wins over it. */
export const FAST_RETRIES = { baseDelayMs: 10, maxDelayMs: 40 };

export function makeLlm(config: Config, instruments: Instruments = noopInstruments): Llm {
  const llm = createLlm(config, { instruments, logger: silentLogger, retryPolicy: FAST_RETRIES });
  if (!llm) throw new Error('expected an LLM for this config');
  return llm;
}

export function llmFor(fake: FakeLlm, provider: ProviderName, extra: Env = {}): Llm {
  return makeLlm(loadConfig(llmEnv(fake, provider, extra)));
}

/** A well-formed evaluator reply. */
export function scores(overall: number, opts: { feedback?: string; hardcoded?: boolean; each?: number } = {}): Record<string, unknown> {
  const each = opts.each ?? overall;
  return {
    task_alignment: each,
    code_quality: each,
    workspace_usage: each,
    robustness: each,
    overall,
    feedback: opts.feedback ?? `Overall ${overall}: add input validation.`,
    hardcoded: opts.hardcoded ?? false,
  };
}

/** A real server (JSON storage, offline embedder, dev auth) whose LLM is the fake provider. */
export async function startLlmServer(fake: FakeLlm, provider: ProviderName = 'provider_a', extra: Env = {}): Promise<TestServer> {
  const env = llmEnv(fake, provider, extra);
  return startServer(env, { llm: makeLlm(loadConfig(env)) });
}

/** Replies to evaluator calls with the given overall scores, in arrival order (then the last one). */
export function evaluatorScript(fake: FakeLlm, overalls: number[], opts: { feedback?: (overall: number) => string; hardcoded?: boolean[] } = {}): void {
  let n = 0;
  fake.script(() => {
    const i = Math.min(n++, overalls.length - 1);
    return reply.json(scores(overalls[i], { feedback: opts.feedback?.(overalls[i]), hardcoded: opts.hardcoded?.[i] }));
  });
}
