import { authSettings, checkAuthMode, type AuthSettings } from './auth.js';
import { embeddingSettings, type EmbeddingSettings } from './embedding.js';
import { bool, type Env } from './env-readers.js';
import { httpSettings, type HttpSettings } from './http.js';
import { jobsSettings, type JobsSettings } from './jobs.js';
import { llmSettings, providerKeys, type LlmSettings } from './llm.js';
import { outcomeSettings, type OutcomeSettings } from './outcomes.js';
import { observabilitySettings, type ObservabilitySettings } from './observability.js';
import { paymentConfig, type PaymentConfig } from './payment.js';
import { recallSettings, type RecallSettings } from './recall.js';
import { storageSettings, type StorageSettings } from './storage.js';

/**
 * The only reader of the environment. Every SERVICE_* variable of the spec (plus ours,
 * marked (+)) is parsed once into a frozen Config; a bad value throws ConfigError naming the
 * variable, and startup stops with that message. Each area's variables are read in its own
 * file beside this one; this file puts them together and checks what spans areas.
 */
export { ConfigError, type Env } from './env-readers.js';
export { effectiveAuthMode, type AuthMode } from './auth.js';
export type { LlmProvider } from './llm.js';
export type { PaymentConfig } from './payment.js';
export { loadClientEnv, loadClientEnvWithFile, type ClientEnv } from './client.js';

/**
 * Nested by area: each part of the service is handed its own (`config.storage` to the storage
 * adapters, `config.http.rateLimit` to the limiter, `deps.config.recall` to recall…).
 * `llm`, `embedding`, `auth` and `jobs` are areas of their own already.
 */
export interface Config extends LlmSettings, EmbeddingSettings, AuthSettings, JobsSettings {
  storage: StorageSettings;
  recall: RecallSettings;
  /** (+) Recall traces, outcomes and where the reuse credit goes (docs/behavior.md "Outcomes"). */
  outcomes: OutcomeSettings;
  http: HttpSettings;
  observability: ObservabilitySettings;
  /** PII and secrets are redacted from what is learned or imported, unless SERVICE_REDACTION=false. */
  redaction: boolean;
  payment: PaymentConfig;
}

/** Parses the environment; throws ConfigError naming the first bad variable, areas read in the order below. */
export function loadConfig(env: Env = process.env): Config {
  const keys = providerKeys(env);
  const config: Config = {
    storage: storageSettings(env),
    ...llmSettings(env, keys),
    ...embeddingSettings(env, keys.openai),
    recall: recallSettings(env),
    outcomes: outcomeSettings(env),
    ...authSettings(env),
    http: httpSettings(env),
    redaction: bool(env, 'SERVICE_REDACTION', true),
    observability: observabilitySettings(env),
    payment: paymentConfig(env),
    ...jobsSettings(env),
  };
  checkAuthMode(config);
  return deepFreeze(config);
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
