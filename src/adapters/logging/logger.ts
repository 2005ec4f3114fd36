import cluster from 'node:cluster';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { scrubSecretText } from '../../core/secret-scrub.js';
import { batchedStderr } from './turn-batch.js';
import { outputNumberReplacer } from '../../core/output-numbers.js';
import { REDACTED } from '../../core/redaction.js';

/**
 * The process logger: pino, writing JSON lines (SERVICE_JSON_LOGS=true) or one readable line
 * per entry. Logs go to stderr so stdout stays free for the CLI's own output (`service serve`
 * prints its listening address there).
 */
export interface LoggerOptions {
  level: string;
  json: boolean;
  /** Where lines go (tests pass a collector); stderr by default. */
  destination?: { write(line: string): unknown };
  /** Fields added to every line (the active trace id, when tracing). */
  mixin?: () => Record<string, unknown>;
  /** Configured secrets: removed from every line, wherever they appear (error text included). */
  secrets?: readonly string[];
}

export type AppLogger = PinoLogger;

/** Field names whose values never reach a log line, at any depth. */
const SECRET_FIELD = /authorization|api[_-]?key|secret|password|passwd|token|cookie/i;
const MAX_DEPTH = 6;

/**
 * Copies a log object with secret-looking fields replaced. Only plain objects and arrays are
 * walked: class instances (errors, Fastify's request and reply) are left to their serializers.
 */
export function scrubSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((v) => scrubSecrets(v, depth + 1));
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_FIELD.test(key) && v !== null && v !== undefined ? REDACTED : scrubSecrets(v, depth + 1);
  }
  return out;
}

export function createLogger(opts: LoggerOptions): AppLogger {
  // stderr through the turn batch (turn-batch.ts); a given destination (tests) gets each line at once.
  const target = opts.destination ?? batchedStderr();
  const secrets = opts.secrets ?? [];
  // Last line of defence: field names are scrubbed above, but a secret can also hide in a
  // message or an error's text (a provider echoing the key), so every finished line is scrubbed.
  const emit = (line: string) => void target.write(scrubSecretText(line, secrets));
  const stream: DestinationStream = opts.json
    ? { write: (line: string) => emit(line) }
    : { write: (line: string) => emit(formatLine(line)) };
  // With `serve --workers N` every worker logs its own start-up: each line names its worker
  // (cluster ids 1..N), so N alike lines read as N workers, not one line printed N times.
  const worker = cluster.isWorker && cluster.worker ? { worker: cluster.worker.id } : undefined;
  return pino(
    {
      level: opts.level,
      base: worker,
      ...(opts.mixin ? { mixin: opts.mixin } : {}),
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (obj) => scrubSecrets(obj) as Record<string, unknown>,
      },
      serializers: { req: requestSummary },
      // A route logging `req.headers` must still not leak the key.
      redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: REDACTED },
    },
    stream,
  );
}

/**
 * Fastify's request log line without the query string: GET recall carries the task there,
 * and task text (possibly PII, not yet redacted) must not reach the logs.
 */
function requestSummary(req: { method?: string; url?: string; ip?: string }): Record<string, unknown> {
  return { method: req.method, url: typeof req.url === 'string' ? req.url.split('?')[0] : undefined, remoteAddress: req.ip };
}

const LEVEL_WIDTH = 5;

/** One JSON log line → `2025-01-01T00:00:00.000Z INFO  message key=value …`. */
export function formatLine(jsonLine: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const { time, level, msg, err, ...rest } = entry;
  const parts = [String(time ?? ''), String(level ?? '').toUpperCase().padEnd(LEVEL_WIDTH), String(msg ?? '')];
  for (const [key, value] of Object.entries(rest)) parts.push(`${key}=${formatValue(value)}`);
  let line = parts.filter((p) => p !== '').join(' ');
  if (err && typeof err === 'object') {
    const e = err as { type?: string; message?: string; stack?: string };
    line += `\n${e.stack ?? `${e.type ?? 'Error'}: ${e.message ?? ''}`}`.replace(/\n/g, '\n  ');
  } else if (err !== undefined) {
    line += ` err=${formatValue(err)}`;
  }
  return line + '\n';
}

/** Numbers as everywhere else the program prints them (float noise rounded away). */
function formatValue(value: unknown): string {
  if (typeof value === 'string') return /[\s="]/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value, outputNumberReplacer);
}
