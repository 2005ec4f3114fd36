import { authSettings, checkAuthMode, type AuthSettings } from './auth.js';
import { embeddingSettings, type EmbeddingSettings } from './embedding.js';
import { bool, type Env } from './env-readers.js';
import { httpSettings, type HttpSettings } from './http.js';
import { jobsSettings, type JobsSettings } from './jobs.js';
import { llmSettings, providerKeys, type LlmSettings } from './llm.js';
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

export interface Config
  extends StorageSettings, LlmSettings, EmbeddingSettings, RecallSettings, AuthSettings,
    HttpSettings, ObservabilitySettings, JobsSettings {
  /** PII and secrets are redacted from what is learned or imported, unless SERVICE_REDACTION=false. */
  redaction: boolean;
  payment: PaymentConfig;
}

/** Parses the environment; throws ConfigError naming the first bad variable, areas read in the order below. */
export function loadConfig(env: Env = process.env): Config {
  const keys = providerKeys(env);
  const config: Config = {
    ...storageSettings(env),
    ...llmSettings(env, keys),
    ...embeddingSettings(env, keys.openai),
    ...recallSettings(env),
    ...authSettings(env),
    ...httpSettings(env),
    redaction: bool(env, 'SERVICE_REDACTION', true),
    ...observabilitySettings(env),
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
