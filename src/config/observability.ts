import { bool, oneOf, str, url, type Env } from './env-readers.js';

/** Logs, traces and metrics. */
export interface ObservabilitySettings {
  jsonLogs: boolean;
  logLevel: string;
  telemetry: { enabled: boolean; endpoint: string };
  metrics: { enabled: boolean; token: string | null };
}

export function observabilitySettings(env: Env): ObservabilitySettings {
  return {
    jsonLogs: bool(env, 'SERVICE_JSON_LOGS', false),
    logLevel: oneOf(env, 'SERVICE_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    telemetry: {
      enabled: bool(env, 'SERVICE_TELEMETRY', false),
      endpoint: url(env, 'SERVICE_OTEL_ENDPOINT') ?? 'http://localhost:4317',
    },
    metrics: { enabled: bool(env, 'SERVICE_METRICS', false), token: str(env, 'SERVICE_METRICS_TOKEN') },
  };
}
