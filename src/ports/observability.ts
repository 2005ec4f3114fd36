/** Minimal structured logger (pino-compatible); never pass secrets in `obj`. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Counters and histograms the services feed (the Prometheus adapter exposes them at /metrics
 * under the spec's names). A no-op implementation is fine where metrics are off.
 */
export interface Instruments {
  recallHit(): void;
  recallMiss(): void;
  llmCall(provider: string, model: string, seconds: number): void;
  embedding(provider: string, seconds: number): void;
  storageOp(backend: string, operation: string, seconds: number): void;
  jobSubmitted(operation: string): void;
  jobCompleted(operation: string, status: string): void;
  /**
   * (+) Verified reuse: an LLM call (and how it went), a verdict, or a verdict served from
   * the cache. Optional, so instrument sets written before it stay valid.
   */
  verification?(event: VerificationEvent): void;
}

export type VerificationEvent =
  | { kind: 'call'; outcome: 'ok' | 'error' | 'unparsable' }
  | { kind: 'verdict'; verdict: string }
  | { kind: 'cache_hit' };

export const noopInstruments: Instruments = {
  recallHit() {}, recallMiss() {}, llmCall() {}, embedding() {}, storageOp() {}, jobSubmitted() {}, jobCompleted() {},
};
