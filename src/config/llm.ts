import { parsePriceTable, type ModelPrice } from '../core/pricing.js';
import { ConfigError, num, oneOf, str, url, type Env } from './env-readers.js';

export type LlmProvider = 'openai' | 'anthropic' | 'none';

export interface LlmSettings {
  llm: {
    provider: LlmProvider;
    /** Model id; a per-provider default when unset. */
    model: string;
    apiKey: string | null;
    baseUrl: string | null;
    timeoutSeconds: number;
    concurrency: number;
    /** (+) SERVICE_LLM_PRICES: per-model prices over the shipped table (core/pricing.ts). */
    prices: Record<string, ModelPrice>;
  };
}

/** The providers' API keys: the spec's name first, then the vendor's usual one. */
export interface ProviderKeys {
  openai: string | null;
  anthropic: string | null;
}

const DEFAULT_MODELS: Record<Exclude<LlmProvider, 'none'>, string> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-3-5-haiku-latest',
};

export function providerKeys(env: Env): ProviderKeys {
  return {
    openai: str(env, 'LLM_PROVIDER_A_API_KEY') ?? str(env, 'OPENAI_API_KEY'),
    anthropic: str(env, 'LLM_PROVIDER_B_API_KEY') ?? str(env, 'ANTHROPIC_API_KEY'),
  };
}

/** The spec names the providers provider_a and provider_b; their vendor names are accepted too. */
function parseLlmProvider(env: Env): LlmProvider {
  const raw = oneOf(env, 'SERVICE_LLM_PROVIDER', ['provider_a', 'provider_b', 'none', 'openai', 'anthropic'] as const, 'provider_a');
  if (raw === 'provider_a') return 'openai';
  if (raw === 'provider_b') return 'anthropic';
  return raw;
}

export function llmSettings(env: Env, keys: ProviderKeys): LlmSettings {
  const provider = parseLlmProvider(env);
  const baseUrl = url(env, 'SERVICE_LLM_BASE_URL');
  return {
    llm: {
      provider,
      model: str(env, 'SERVICE_LLM_MODEL') ?? (provider === 'none' ? 'none' : DEFAULT_MODELS[provider]),
      apiKey: provider === 'openai' ? keys.openai : provider === 'anthropic' ? keys.anthropic : null,
      baseUrl,
      timeoutSeconds: num(env, 'SERVICE_LLM_TIMEOUT', 30, { min: 0.1, max: 3600 }),
      concurrency: num(env, 'SERVICE_LLM_CONCURRENCY', 10, { min: 1, max: 1000, int: true }),
      prices: llmPrices(env),
    },
  };
}

function llmPrices(env: Env): Record<string, ModelPrice> {
  const text = str(env, 'SERVICE_LLM_PRICES');
  if (text === null) return {};
  try {
    return parsePriceTable(text);
  } catch (err) {
    throw new ConfigError('SERVICE_LLM_PRICES', (err as Error).message);
  }
}
