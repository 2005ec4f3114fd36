import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { DEFAULT_LLM_MAX_TOKENS, type LlmCompletion, type LlmRequest } from '../../ports/llm.js';
import { type ProviderClient, translateSdkError } from './provider.js';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';

export interface AnthropicOptions {
  apiKey: string;
  model: string;
  /** Messages-API endpoint root (the SDK appends /v1/messages); the public API when null. */
  baseUrl: string | null;
  /** Backstop only: the resilient wrapper aborts each attempt at its own timeout. */
  timeoutMs: number;
}

const SDK_ERRORS = { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError };

/**
 * One Messages-API attempt per call through the official SDK (provider_b). The API has no
 * JSON mode; `req.json` is honoured by the prompts, which ask for a bare JSON object.
 */
export function createAnthropicClient(opts: AnthropicOptions): ProviderClient {
  const client = new Anthropic({
    apiKey: opts.apiKey,
    // Explicit values so the SDK does not fall back to ANTHROPIC_* environment variables.
    authToken: null,
    baseURL: opts.baseUrl ?? DEFAULT_BASE_URL,
    // One retry policy for the whole service: resilient.ts.
    maxRetries: 0,
    timeout: opts.timeoutMs,
  });

  return {
    provider: 'anthropic',
    model: opts.model,
    async call(req: LlmRequest, signal: AbortSignal, headers: Record<string, string> = {}): Promise<LlmCompletion> {
      const started = performance.now();
      try {
        const res = await client.messages.create(
          {
            model: opts.model,
            max_tokens: req.maxTokens ?? DEFAULT_LLM_MAX_TOKENS,
            system: req.system,
            messages: [{ role: 'user', content: req.prompt }],
            // The Messages API accepts 0–1.
            ...(req.temperature === undefined ? {} : { temperature: Math.min(1, Math.max(0, req.temperature)) }),
          },
          { signal, headers },
        );
        const text = res.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
        return {
          text,
          usage: { input_tokens: res.usage?.input_tokens ?? 0, output_tokens: res.usage?.output_tokens ?? 0 },
          duration_ms: performance.now() - started,
        };
      } catch (err) {
        throw translateSdkError(err, SDK_ERRORS, 'anthropic', [opts.apiKey]);
      }
    },
    async ping(signal: AbortSignal): Promise<void> {
      try {
        await client.models.list({ limit: 1 }, { signal });
      } catch (err) {
        throw translateSdkError(err, SDK_ERRORS, 'anthropic', [opts.apiKey]);
      }
    },
  };
}
