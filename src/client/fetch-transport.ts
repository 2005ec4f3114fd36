import type { z } from 'zod';
import { apiErrorFor } from './api-errors.js';
import { ProtocolError, TransportError, describeErrorBody, isRecord } from './errors.js';
import {
  checkAnswer, parseBody, queryString, type HttpMethod, type RequestOptions, type RequestTransport, type StreamedResponse, type StreamOptions,
} from './wire.js';

export interface FetchTransportOptions {
  /** Base URL of the service; '' (the default) is the page's own origin. */
  url?: string;
  /** Headers of each request, read per request (a key typed in later is used at once). */
  headers?: () => Record<string, string>;
  /** As ServiceClientOptions.responseCheck (default `contract`). */
  responseCheck?: 'contract' | 'shape';
}

/**
 * A RequestTransport over the platform's `fetch` (browsers; the web console): no cookies, no
 * cache, the same answer checks and error classes as the HTTP transport. It never retries.
 */
export class FetchTransport implements RequestTransport {
  readonly baseUrl: string;

  constructor(private readonly opts: FetchTransportOptions = {}) {
    this.baseUrl = (opts.url ?? '').replace(/\/+$/, '');
  }

  async request<S extends z.ZodType>(method: HttpMethod, path: string, options: RequestOptions<S>): Promise<z.infer<S>> {
    const url = this.baseUrl + path + queryString(options.query);
    const headers: Record<string, string> = { accept: 'application/json', ...this.opts.headers?.(), ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      // `cache` is a browser's (Node's fetch has no HTTP cache), hence the cast for Node's types.
      response = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        credentials: 'omit',
        cache: 'no-store',
      } as RequestInit);
      text = await response.text();
    } catch (err) {
      throw new TransportError(url, `the server could not be reached (${err instanceof Error ? err.message : String(err)})`, null, { cause: err });
    }
    const body = parseBody(text);
    if (response.ok || options.acceptStatuses?.includes(response.status)) {
      const checked = await checkAnswer(body, options, this.opts.responseCheck);
      if (checked.success) return checked.data;
      if (response.ok) throw new ProtocolError(url, `unexpected response from ${method} ${url}${checked.where}`);
    }
    const requestId = isRecord(body) && typeof body.request_id === 'string' ? body.request_id : response.headers.get('x-request-id');
    const retryAfter = Number(response.headers.get('retry-after') ?? NaN);
    throw apiErrorFor(response.status, describeErrorBody(response.status, body), body, requestId, Number.isFinite(retryAfter) ? retryAfter : null);
  }

  /** A streamed GET (the NDJSON exports): the body chunk by chunk as it arrives. */
  async stream(path: string, options: StreamOptions): Promise<StreamedResponse> {
    const url = this.baseUrl + path + queryString(options.query);
    let response: Response;
    try {
      response = await fetch(url, { headers: { accept: options.accept, ...this.opts.headers?.() }, credentials: 'omit', cache: 'no-store' } as RequestInit);
    } catch (err) {
      throw new TransportError(url, `the server could not be reached (${err instanceof Error ? err.message : String(err)})`, null, { cause: err });
    }
    if (!response.ok || !response.body) {
      const body = parseBody(await response.text());
      const requestId = isRecord(body) && typeof body.request_id === 'string' ? body.request_id : response.headers.get('x-request-id');
      throw apiErrorFor(response.status, describeErrorBody(response.status, body), body, requestId, null);
    }
    const reader = response.body.getReader();
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    // A reader loop rather than `for await` over the stream, which not every browser offers.
    const chunks = {
      async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      },
      destroy(): void {
        void reader.cancel();
      },
    };
    return { headers, body: chunks };
  }

  async close(): Promise<void> {
    // Nothing pooled: the browser owns the connections.
  }
}
