import type { Llm } from '../ports/llm.js';

/** What one user of the LLM spent: completions received and their tokens, from the provider's usage. */
export interface LlmMeter {
  calls: number;
  input: number;
  output: number;
}

/**
 * The same LLM, counting every completion that comes back through it (docs/behavior.md
 * "Evaluation cost"): a malformed reply and its retry are two calls with their own tokens. A
 * provider attempt that failed (timeout, 5xx) returned no usage and bills none, so it adds
 * nothing here.
 */
export function meteredLlm(llm: Llm): { llm: Llm; meter: LlmMeter } {
  const meter: LlmMeter = { calls: 0, input: 0, output: 0 };
  const wrapped: Llm = {
    provider: llm.provider,
    model: llm.model,
    ping: () => llm.ping(),
    async complete(req) {
      const completion = await llm.complete(req);
      meter.calls++;
      meter.input += completion.usage.input_tokens;
      meter.output += completion.usage.output_tokens;
      return completion;
    },
  };
  return { llm: wrapped, meter };
}
