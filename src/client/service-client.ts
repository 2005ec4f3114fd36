import { ApiClient } from './api-client.js';
import { CONTRACTS } from './route-schemas.js';
import { HttpTransport, type RetryPolicy } from './transport.js';
import type { RequestTransport } from './wire.js';

export interface ServiceClientOptions {
  /** Base URL of a running service, e.g. http://127.0.0.1:8000 (a path prefix is kept). */
  url: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string | null;
  /** Sent as `X-Project-Id` (env and dev auth modes select the project with it). */
  project?: string | null;
  /** Per-request limit for the response headers and for the body, in ms (default 60 s). */
  timeoutMs?: number;
  /** User-Agent header (default `agent-memory-service-client`). */
  userAgent?: string;
  /** Sends requests through this instead of HTTP (its own auth); url and headers are then unused. */
  transport?: RequestTransport;
  /**
   * `contract` (default): every answer is parsed with its zod contract. `shape`: the answers
   * of the hot endpoints (learn, recall) are only checked for their top-level fields.
   */
  responseCheck?: 'contract' | 'shape';
  /**
   * Wait and retry when the service answers 429/503 with RateLimit-Reset or Retry-After, up to
   * `maxWaitMs` in total per request. Off unless given.
   */
  retry?: RetryPolicy;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * The typed client (ApiClient: one method per endpoint, each answer validated with the same
 * zod contract the server uses) over HTTP: reuses connections (keep-alive); call close() when
 * done. A new endpoint is an entry of the route table and a one-liner over `call`.
 */
export class ServiceClient extends ApiClient {
  constructor(options: ServiceClientOptions) {
    super(options.transport ?? httpTransport(options), CONTRACTS);
  }

  /** The normalised base URL requests go to. */
  get url(): string {
    return this.transport.baseUrl;
  }
}

function httpTransport(options: ServiceClientOptions): HttpTransport {
  const headers: Record<string, string> = { 'user-agent': options.userAgent ?? 'agent-memory-service-client' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  if (options.project) headers['x-project-id'] = options.project;
  return new HttpTransport({
    url: options.url,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    headers,
    responseCheck: options.responseCheck,
    retry: options.retry,
  });
}
