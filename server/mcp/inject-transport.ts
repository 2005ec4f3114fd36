import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { z } from 'zod';
import {
  ProtocolError, apiErrorFor, describeErrorBody, parseBody, queryString, type HttpMethod, type RequestOptions, type RequestTransport,
} from '../../src/client/index.js';

/** Who is calling: the headers that carry the key and project, passed on unchanged. */
export interface InjectCaller {
  authorization: string | undefined;
  projectId: string | undefined;
  /** The caller's address (per-IP rate limit and audit see the real client, not loopback). */
  ip: string;
  /** The MCP request's id, reused so its tool calls share it in logs and audit events. */
  requestId: string;
}

/**
 * A client transport that dispatches to this server's own routes (Fastify inject) with the
 * caller's credentials: every MCP tool call passes the same authentication, scope, permission,
 * rate limits, validation and error mapping as the REST call it stands for.
 */
export class InjectTransport implements RequestTransport {
  readonly baseUrl = 'in-process';

  constructor(private readonly server: FastifyInstance, private readonly caller: InjectCaller) {}

  async request<S extends z.ZodType>(method: HttpMethod, path: string, options: RequestOptions<S>): Promise<z.infer<S>> {
    const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': this.caller.requestId, ...options.headers };
    if (this.caller.authorization !== undefined) headers.authorization = this.caller.authorization;
    if (this.caller.projectId !== undefined) headers['x-project-id'] = this.caller.projectId;
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const response = await this.server.inject({
      method, url: path + queryString(options.query), headers, payload, remoteAddress: this.caller.ip,
    });
    const body = parseBody(response.body);
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    if (ok) {
      // A schema may be given as a loader (the client defers zod until an answer is checked).
      const schema = typeof options.schema === 'function' && !('safeParse' in options.schema) ? await (options.schema as () => Promise<S>)() : (options.schema as S);
      const parsed = schema.safeParse(body);
      if (parsed.success) return parsed.data;
      // Our own route answered outside its contract: a bug, reported as such.
      throw new ProtocolError(path, `${method} ${path} answered outside its contract`);
    }
    throw apiErrorFor(response.statusCode, describeErrorBody(response.statusCode, body), body, this.caller.requestId, retryAfter(response));
  }

  async close(): Promise<void> {
    // Nothing pooled: inject uses no sockets.
  }
}

function retryAfter(response: LightMyRequestResponse): number | null {
  const v = response.headers['retry-after'];
  const n = Number(Array.isArray(v) ? v[0] : v);
  return v !== undefined && Number.isFinite(n) ? n : null;
}
