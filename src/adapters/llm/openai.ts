import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { DEFAULT_LLM_MAX_TOKENS, type LlmCompletion, type LlmRequest } from '../../ports/llm.js';
import { type ProviderClient, translateSdkError } from './provider.js';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAiOptions {
  apiKey: string;
  model: string;
  /** OpenAI-compatible endpoint (…/v1); the public API when null. */
  baseUrl: string | null;
  /** Backstop only: the resilient wrapper aborts each attempt at its own timeout. */
  timeoutMs: number;
}

const SDK_ERRORS = { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError };

/** One chat-completions attempt per call through the official SDK (provider_a). */
export function createOpenAiClient(opts: OpenAiOptions): ProviderClient {
  const client = new OpenAI({
    apiKey: opts.apiKey,
    // Explicit values so the SDK does not fall back to OPENAI_* environment variables.
    baseURL: opts.baseUrl ?? DEFAULT_BASE_URL,
    organization: null,
    project: null,
    // One retry policy for the whole service: resilient.ts.
    maxRetries: 0,
    timeout: opts.timeoutMs,
  });

  return {
    provider: 'openai',
    model: opts.model,
    async call(req: LlmRequest, signal: AbortSignal, headers: Record<string, string> = {}): Promise<LlmCompletion> {
      const started = performance.now();
      try {
        const res = await client.chat.completions.create(
          {
            model: opts.model,
            messages: [
              { role: 'system', content: req.system },
              { role: 'user', content: req.prompt },
            ],
            ...(req.temperature === undefined ? {} : { temperature: req.temperature }),
            // max_tokens rather than max_completion_tokens: OpenAI-compatible servers accept it.
            max_tokens: req.maxTokens ?? DEFAULT_LLM_MAX_TOKENS,
            ...(req.json ? { response_format: { type: 'json_object' as const } } : {}),
          },
          { signal, headers },
        );
        return {
          text: res.choices[0]?.message?.content ?? '',
          usage: { input_tokens: res.usage?.prompt_tokens ?? 0, output_tokens: res.usage?.completion_tokens ?? 0 },
          duration_ms: performance.now() - started,
        };
      } catch (err) {
        throw translateSdkError(err, SDK_ERRORS, 'openai', [opts.apiKey]);
      }
    },
    async ping(signal: AbortSignal): Promise<void> {
      try {
        await client.models.list({ signal });
      } catch (err) {
        throw translateSdkError(err, SDK_ERRORS, 'openai', [opts.apiKey]);
      }
    },
  };
}
