import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z, ZodType } from 'zod';
import { JobAccepted } from '../src/contracts/jobs.js';
import type { Permission } from '../src/core/permissions.js';
import type { HttpMethod, RouteEntry, SchemasOf } from '../src/contracts/routes.js';
import type { RateClass } from './context.js';
import { parseWith } from './http.js';
import { schemasNow } from './route-schemas.js';

export type { HttpMethod };

/**
 * Everything a route declares: its table entry (method, path, schemas: src/contracts/routes.ts)
 * and what the server adds (who may call it, what the OpenAPI document says of it). The route registry keeps it, so the
 * OpenAPI document (server/openapi/document.ts), the tests' response check and the
 * permission-matrix / tenant-isolation / bad-input tests read it from the running server.
 */
export interface RouteContract {
  method: HttpMethod;
  /** Fastify's path (`/v1/jobs/:id`). */
  url: string;
  /** The permission an API key's role must hold; or `public: true` for routes without a key. */
  permission?: Permission;
  public?: true;
  /** Rate-limit bucket (standard unless said). */
  rateClass?: RateClass;
  /** OpenAPI tag and one-sentence summary (plus an optional longer description). */
  tag: string;
  summary: string;
  description?: string;
  /** Path parameters, query string and JSON body: parsed before the handler runs (422 on a mismatch). */
  params?: ZodType;
  query?: ZodType;
  body?: ZodType;
  /** The body may be omitted entirely: no body parses as `{}`. */
  bodyOptional?: boolean;
  /**
   * `manual`: the handler reads the request itself (a raw or NDJSON body, a hijacked reply);
   * the schemas above then only document it.
   */
  input?: 'manual';
  /** The success body (JSON), checked before it is sent; `{text}` for non-JSON answers. */
  response: ZodType | { text: string };
  /** The success status (200 unless said). */
  status?: number;
  /** Accepts `Prefer: respond-async` (202 with a job). */
  async?: boolean;
  /** Error statuses particular to this route (the common ones are added for every route). */
  errors?: number[];
  /** Error statuses answered with the success body's shape (deep health's 503) instead of ErrorBody. */
  sameShapeErrors?: number[];
}

type Parsed<S> = S extends ZodType ? z.output<S> : undefined;

/** What the handler receives: the parsed params, query and body (undefined where not declared). */
export interface RouteInput<P, Q, B> {
  params: Parsed<P>;
  query: Parsed<Q>;
  body: Parsed<B>;
}

type Field<E, K extends 'params' | 'query' | 'body'> = SchemasOf<E> extends { [k in K]: infer T } ? T : undefined;
/** The handler's input for a route table entry. */
export type EntryInput<E> = RouteInput<Field<E, 'params'>, Field<E, 'query'>, Field<E, 'body'>>;

/** What a route adds to its table entry: who may call it, how it is documented, and its handler. */
export type RouteDefinition<E extends RouteEntry> = Omit<RouteContract, 'method' | 'url' | 'params' | 'query' | 'body' | 'response'> & {
  handler(input: EntryInput<E>, request: FastifyRequest, reply: FastifyReply): unknown;
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's whole declaration (set by defineRoute). */
    contract?: RouteContract;
  }
  interface FastifyRequest {
    /** Why the answer did not match its declared contract (read by the tests' response check). */
    responseDrift?: string;
  }
}

/** A success body that does not match the route's declared contract: a bug, answered as a 500. */
export class ResponseDriftError extends Error {
  constructor(readonly where: string, readonly issues: string) {
    super(`response drift: ${where} does not match its contract: ${issues}`);
    this.name = 'ResponseDriftError';
  }
}

/**
 * Registers a route of the table (src/contracts/routes.ts) with what the server adds to it:
 * parses params, query and body with the entry's schemas (in that order; 422 naming the field),
 * runs the handler, and checks the answer against the entry's response schema before it is
 * sent. The body sent is the handler's value as it is (nothing is dropped or reordered); one
 * that breaks its contract becomes a 500.
 */
export function defineRoute<E extends RouteEntry>(app: FastifyInstance, entry: E, definition: RouteDefinition<E>): void {
  const { handler, ...rest } = definition;
  const contract: RouteContract = { method: entry.method, url: entry.path, ...schemasNow(entry), ...rest };
  const config = { contract, ...(contract.permission ? { permission: contract.permission } : {}), ...(contract.public ? { public: true } : {}), ...(contract.rateClass ? { rateClass: contract.rateClass } : {}) };
  app.route({
    method: contract.method,
    url: contract.url,
    config,
    handler: async (request, reply) => {
      const input = contract.input === 'manual' ? { params: undefined, query: undefined, body: undefined } : parseInput(contract, request);
      if (contract.status) reply.status(contract.status);
      const result = await handler(input as EntryInput<E>, request, reply);
      if (reply.sent || 'text' in contract.response) return result;
      return checked(contract, request, reply, result);
    },
  });
}

function parseInput(contract: RouteContract, request: FastifyRequest): { params: unknown; query: unknown; body: unknown } {
  const params = contract.params ? parseWith(contract.params, request.params, 'path') : undefined;
  const query = contract.query ? parseWith(contract.query, request.query, 'query') : undefined;
  const raw = contract.bodyOptional ? (request.body ?? {}) : request.body;
  const body = contract.body ? parseWith(contract.body, raw) : undefined;
  return { params, query, body };
}

/** The declared schema of the answer about to be sent: 202 is a queued job, else the route's own. */
export function responseSchema(contract: RouteContract, status: number): ZodType | null {
  if (status === 202 && contract.async) return JobAccepted;
  if (status >= 400 && !contract.sameShapeErrors?.includes(status)) return null;
  return 'text' in contract.response ? null : contract.response;
}

function checked(contract: RouteContract, request: FastifyRequest, reply: FastifyReply, result: unknown): unknown {
  const schema = responseSchema(contract, reply.statusCode);
  if (!schema) return result;
  const parsed = schema.safeParse(result);
  if (parsed.success) return result;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  const error = new ResponseDriftError(`${contract.method} ${contract.url} → ${reply.statusCode}`, issues);
  request.responseDrift = error.message;
  throw error;
}
