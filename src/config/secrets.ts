import type { Config } from './index.js';

/**
 * Every secret value the configuration holds, for scrubbing provider error text and log lines
 * (core/secret-scrub.ts). Derived from the parsed Config, so src/config/ stays the only reader
 * of the environment.
 */
export function configuredSecrets(config: Config): string[] {
  const values = [
    config.llm.apiKey,
    config.embedding.hostedApiKey,
    config.auth.bootstrapToken,
    config.observability.metrics.token,
    config.payment.secretKey,
    config.payment.webhookSecret,
    ...config.auth.apiKeys,
  ];
  // The database password rides in the URL.
  if (config.storage.databaseUrl) {
    try {
      const password = decodeURIComponent(new URL(config.storage.databaseUrl).password);
      if (password) values.push(password);
    } catch {
      // An unparseable URL fails elsewhere with its own message.
    }
  }
  return [...new Set(values.filter((v): v is string => typeof v === 'string' && v.length > 0))];
}
