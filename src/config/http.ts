import { bool, list, num, str, type Env } from './env-readers.js';

/** The HTTP server: where it listens, what it accepts, and which endpoints it serves. */
export interface HttpSettings {
  /**
   * server.timeouts (+): bounds on slow clients (docs/behavior.md "Faults"), in milliseconds: a whole request
   * (SERVICE_REQUEST_TIMEOUT_SECONDS), its headers (SERVICE_HEADERS_TIMEOUT_SECONDS), and an
   * idle keep-alive connection (SERVICE_KEEP_ALIVE_TIMEOUT_SECONDS).
   */
  server: { host: string; port: number; timeouts: { requestMs: number; headersMs: number; keepAliveMs: number } };
  corsOrigins: string[];
  /**
   * Requests per window per IP (standard, expensive) and per key. dbTimeoutMs (+): with PostgreSQL storage, the
   * longest a request waits for the shared count before its process decides alone (docs/behavior.md "Rate limits").
   */
  rateLimit: { default: number; expensive: number; perKey: number; windowSeconds: number; dbTimeoutMs: number };
  trustedProxies: string[];
  maxBodySize: number;
  maintenance: boolean;
  /** (+) POST /mcp (MCP over Streamable HTTP), off unless SERVICE_MCP=true. */
  mcp: { enabled: boolean };
  /** (+) The web console at /console (static files built into dist/console), on unless SERVICE_CONSOLE=false. */
  console: { enabled: boolean };
}

/** SERVICE_MAX_BODY_SIZE's default: the largest request body the server reads, in bytes. */
export const DEFAULT_MAX_BODY_SIZE = 1_048_576;

export function httpSettings(env: Env): HttpSettings {
  return {
    server: {
      host: str(env, 'SERVICE_HOST') ?? '127.0.0.1',
      port: num(env, 'SERVICE_PORT', 8000, { min: 0, max: 65535, int: true }),
      timeouts: {
        requestMs: 1000 * num(env, 'SERVICE_REQUEST_TIMEOUT_SECONDS', 120, { min: 1, max: 3600 }),
        headersMs: 1000 * num(env, 'SERVICE_HEADERS_TIMEOUT_SECONDS', 10, { min: 1, max: 600 }),
        keepAliveMs: 1000 * num(env, 'SERVICE_KEEP_ALIVE_TIMEOUT_SECONDS', 5, { min: 1, max: 600 }),
      },
    },
    corsOrigins: list(env, 'SERVICE_CORS_ORIGINS'),
    rateLimit: {
      default: num(env, 'SERVICE_RATE_LIMIT_DEFAULT', 60, { min: 1, int: true }),
      expensive: num(env, 'SERVICE_RATE_LIMIT_EXPENSIVE', 10, { min: 1, int: true }),
      perKey: num(env, 'SERVICE_RATE_LIMIT_PER_KEY', 120, { min: 1, int: true }),
      // (+) Length of the fixed window the three limits count in; short ones are for tests.
      windowSeconds: num(env, 'SERVICE_RATE_LIMIT_WINDOW_SECONDS', 60, { min: 1, int: true }),
      dbTimeoutMs: num(env, 'SERVICE_RATE_LIMIT_DB_TIMEOUT_MS', 250, { min: 1, max: 60_000, int: true }),
    },
    // No proxy is trusted unless the operator names it (docs/behavior.md "Rate limits"): trusting private ranges
    // let any peer on the network rotate X-Forwarded-For past the per-IP limit.
    trustedProxies: list(env, 'SERVICE_TRUSTED_PROXIES'),
    maxBodySize: num(env, 'SERVICE_MAX_BODY_SIZE', DEFAULT_MAX_BODY_SIZE, { min: 1024, int: true }),
    maintenance: bool(env, 'SERVICE_MAINTENANCE', false),
    mcp: { enabled: bool(env, 'SERVICE_MCP', false) },
    console: { enabled: bool(env, 'SERVICE_CONSOLE', true) },
  };
}
