/** One chat completion request, provider-neutral. */
export interface LlmRequest {
  system: string;
  prompt: string;
  /** > 0 for independent evaluators; defaults to the adapter's choice. */
  temperature?: number;
  /** Answer length limit (DEFAULT_LLM_MAX_TOKENS unless said). */
  maxTokens?: number;
  /** Ask the provider for a JSON object reply where it supports that. */
  json?: boolean;
}

export interface LlmCompletion {
  text: string;
  usage: { input_tokens: number; output_tokens: number };
  duration_ms: number;
}

/**
 * A chat model. Adapters wrap the real SDKs (openai, @anthropic-ai/sdk); the resilient
 * wrapper adds the process-wide concurrency limit, per-call timeout and retries with
 * backoff honouring Retry-After. After retries an outage surfaces as UnavailableError.
 */
export interface Llm {
  readonly provider: 'openai' | 'anthropic';
  readonly model: string;
  complete(req: LlmRequest): Promise<LlmCompletion>;
  /** A cheap authenticated call for deep health; throws when the provider is unreachable. */
  ping(): Promise<void>;
}

/** The answer length an LLM call gets when it does not say. */
export const DEFAULT_LLM_MAX_TOKENS = 1024;
