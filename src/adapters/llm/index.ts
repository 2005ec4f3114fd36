import type { Config } from '../../config/index.js';
import type { Llm } from '../../ports/llm.js';
import type { Instruments, Logger } from '../../ports/observability.js';
import type { Tracer } from '../../ports/tracing.js';
import { createAnthropicClient } from './anthropic.js';
import { createOpenAiClient } from './openai.js';
import type { ProviderClient } from './provider.js';
import { createResilientLlm, type RetryPolicy } from './resilient.js';
import { Semaphore } from '../semaphore.js';

export interface CreateLlmOptions {
  instruments: Instruments;
  logger: Logger;
  /** Tests shorten the backoff; production uses the defaults (3 retries, 0.5 s base). */
  retryPolicy?: Partial<RetryPolicy>;
  tracer?: Tracer;
}

/**
 * The configured chat model behind the resilient wrapper, or null when no provider is
 * usable (SERVICE_LLM_PROVIDER=none, or the provider's API key is missing): the LLM
 * endpoints then answer 501. Build it once per process: its semaphore is the process-wide
 * SERVICE_LLM_CONCURRENCY limit.
 */
export function createLlm(config: Config, opts: CreateLlmOptions): Llm | null {
  const { provider, apiKey, model, baseUrl, timeoutSeconds, concurrency } = config.llm;
  if (provider === 'none') return null;
  if (!apiKey) {
    const variable = provider === 'openai' ? 'LLM_PROVIDER_A_API_KEY' : 'LLM_PROVIDER_B_API_KEY';
    opts.logger.warn({ provider, variable }, 'LLM provider has no API key; evaluate, compose and evolve will answer 501');
    return null;
  }
  const timeoutMs = Math.round(timeoutSeconds * 1000);
  // The SDK timeout is only a backstop behind the wrapper's own per-attempt deadline.
  const sdk = { apiKey, model, baseUrl, timeoutMs: timeoutMs + 5_000 };
  const client: ProviderClient = provider === 'openai' ? createOpenAiClient(sdk) : createAnthropicClient(sdk);
  return createResilientLlm(client, {
    timeoutMs,
    semaphore: new Semaphore(concurrency),
    logger: opts.logger,
    instruments: opts.instruments,
    tracer: opts.tracer,
    policy: opts.retryPolicy,
  });
}
