import { setTimeout as wait } from 'node:timers/promises';
import { LlmUnavailableError } from '../../core/errors.js';
import type { Llm, LlmCompletion, LlmRequest } from '../../ports/llm.js';
import type { Instruments, Logger } from '../../ports/observability.js';
import { noopTracer, type Tracer } from '../../ports/tracing.js';
import { ProviderCallError, type ProviderClient } from './provider.js';
import type { Semaphore } from '../semaphore.js';

/**
 * The service's single LLM retry policy (the SDKs' own retries are off): every attempt holds
 * a slot of the process-wide semaphore and is aborted at the per-call timeout; transient
 * failures (timeouts, connection errors, 408/409/429/5xx) are retried up to `maxRetries`
 * times with exponential backoff and jitter, never sooner than the provider's Retry-After.
 * Other 4xx are final. Whatever is still failing becomes LlmUnavailableError (HTTP 503).
 */

export interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the call fails at once. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, baseDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };

export interface ResilientOptions {
  timeoutMs: number;
  semaphore: Semaphore;
  logger: Logger;
  instruments: Instruments;
  /** Each attempt is an `llm` span (provider, model, attempt, tokens); its traceparent goes to the provider. */
  tracer?: Tracer;
  policy?: Partial<RetryPolicy>;
  /** Injectable for tests of the policy itself; real timers otherwise. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export function isRetryable(err: ProviderCallError): boolean {
  if (err.failure === 'timeout' || err.failure === 'connection') return true;
  if (err.failure === 'aborted' || err.status === null) return false;
  return err.status === 408 || err.status === 409 || err.status === 429 || err.status >= 500;
}

/**
 * Delay before retry number `attempt + 1`: base × 2^attempt capped at maxDelay, jittered
 * into its upper half (so concurrent callers spread out but still back off), and never
 * shorter than what the provider asked for.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number, retryAfterMs: number | null): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const jittered = exponential / 2 + random() * (exponential / 2);
  return Math.max(jittered, retryAfterMs ?? 0);
}

export function createResilientLlm(inner: ProviderClient, opts: ResilientOptions): Llm {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...opts.policy };
  const sleep = opts.sleep ?? ((ms: number) => wait(ms));
  const random = opts.random ?? Math.random;
  const { provider, model } = inner;
  const tracer = opts.tracer ?? noopTracer;

  /** One attempt with its own deadline; a deadline hit surfaces as a 'timeout' failure. */
  async function attempt<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, opts.timeoutMs);
    try {
      return await run(controller.signal);
    } catch (err) {
      if (timedOut) {
        throw new ProviderCallError(`${provider} call timed out after ${opts.timeoutMs / 1000}s`, 'timeout', null, null, { cause: err });
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  async function complete(req: LlmRequest): Promise<LlmCompletion> {
    for (let n = 0; ; n++) {
      const started = performance.now();
      try {
        const result = await opts.semaphore.run(() => tracer.inSpan('llm', { 'llm.provider': provider, 'llm.model': model, 'llm.attempt': n + 1 }, async (span) => {
          const completion = await attempt((signal) => inner.call(req, signal, tracer.outboundHeaders()));
          span.setAttributes({ 'llm.input_tokens': completion.usage.input_tokens, 'llm.output_tokens': completion.usage.output_tokens });
          return completion;
        }));
        opts.instruments.llmCall(provider, model, (performance.now() - started) / 1000);
        opts.logger.info(
          { provider, model, input_tokens: result.usage.input_tokens, output_tokens: result.usage.output_tokens, duration_ms: Math.round(result.duration_ms), attempt: n + 1 },
          'llm call',
        );
        return result;
      } catch (err) {
        if (!(err instanceof ProviderCallError)) throw err;
        opts.instruments.llmCall(provider, model, (performance.now() - started) / 1000);
        const attempts = n + 1;
        if (!isRetryable(err)) {
          throw new LlmUnavailableError(`LLM provider ${provider} rejected the request: ${err.message}`, { cause: err });
        }
        if (n >= policy.maxRetries) {
          throw new LlmUnavailableError(`LLM provider ${provider} unavailable after ${attempts} attempts: ${err.message}`, { cause: err });
        }
        if (err.retryAfterMs !== null && err.retryAfterMs > policy.maxRetryAfterMs) {
          throw new LlmUnavailableError(
            `LLM provider ${provider} asked to retry after ${Math.ceil(err.retryAfterMs / 1000)}s: ${err.message}`,
            { cause: err },
          );
        }
        const delay = backoffDelay(n, policy, random, err.retryAfterMs);
        opts.logger.warn({ provider, model, attempt: attempts, status: err.status, failure: err.failure, retry_in_ms: Math.round(delay) }, 'llm call failed; retrying');
        await sleep(delay);
      }
    }
  }

  return {
    provider,
    model,
    complete,
    async ping(): Promise<void> {
      // No semaphore and no retries: a health probe must answer quickly either way.
      try {
        await attempt((signal) => inner.ping(signal));
      } catch (err) {
        if (err instanceof ProviderCallError) throw new LlmUnavailableError(`LLM provider ${provider} unreachable: ${err.message}`, { cause: err });
        throw err;
      }
    },
  };
}
