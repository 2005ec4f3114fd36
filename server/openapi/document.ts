import { z, type ZodType } from 'zod';
import { ErrorBody } from '../../src/contracts/errors.js';
import { ERROR_TABLE, codesForStatus } from '../../src/core/error-table.js';
import { JobAccepted } from '../../src/contracts/jobs.js';
import type { RegisteredRoute } from '../route-registry.js';
import type { RouteContract } from '../define-route.js';

type Json = Record<string, unknown>;

/** Errors any route can answer, by what the route is (public, has input, rate class). */
function commonErrors(route: RegisteredRoute, doc: RouteContract): number[] {
  const statuses = new Set<number>([500, 503]);
  if (!route.config.public) [401, 403].forEach((s) => statuses.add(s));
  if (doc.body || doc.query || doc.params) statuses.add(422);
  if (doc.body) statuses.add(413);
  if (route.config.rateClass !== 'exempt') statuses.add(429);
  for (const s of doc.errors ?? []) statuses.add(s);
  return [...statuses].sort((a, b) => a - b);
}

/** An error response's description: the codes of the error table answered with that status. */
function errorDescription(status: number): string {
  const codes = codesForStatus(status);
  return codes.length === 0 ? 'Error' : codes.map((code) => `\`${code}\`: ${ERROR_TABLE[code].title}`).join('; ');
}

const integerHeader = (description: string): Json => ({ description, schema: { type: 'integer', minimum: 0 } });

/** Sent on the successful answers of a rate-limited route (docs/behavior.md "Rate limits"): the tightest of its counts. */
const RATE_LIMIT_HEADERS: Json = {
  'RateLimit-Limit': integerHeader('Requests the window allows (the tightest of the per-IP and per-key limits).'),
  'RateLimit-Remaining': integerHeader('Requests left in the window.'),
  'RateLimit-Reset': integerHeader('Seconds until the window turns.'),
};

/** A 429: how long to wait; RateLimit-* only when the rate limit refused (`rate_limited`), not a quota. */
const RATE_LIMITED_HEADERS: Json = { 'Retry-After': integerHeader('Seconds to wait (`rate_limited`: the window\'s length).'), ...RATE_LIMIT_HEADERS };

function schemaOf(schema: ZodType, io: 'input' | 'output'): Json {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  delete json.$schema;
  return json;
}

/** Query or path parameters from a zod object's properties. */
function parameters(schema: ZodType | undefined, where: 'query' | 'path'): Json[] {
  if (!schema) return [];
  const json = schemaOf(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, Json>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name, in: where, required: where === 'path' || required.has(name), schema: property,
  }));
}

function operation(route: RegisteredRoute, doc: RouteContract): Json {
  const permission = route.config.permission as string | undefined;
  const responses: Json = {};
  const success = doc.response;
  responses[String(doc.status ?? 200)] = 'text' in success
    ? { description: 'Success', content: { [success.text]: { schema: { type: 'string' } } } }
    : { description: 'Success', content: { 'application/json': { schema: schemaOf(success as ZodType, 'output') } } };
  if (doc.async) {
    responses['202'] = {
      description: 'Accepted as a background job (request header `Prefer: respond-async`); poll `Location`.',
      headers: { Location: { schema: { type: 'string' } } },
      content: { 'application/json': { schema: schemaOf(JobAccepted, 'output') } },
    };
  }
  for (const status of commonErrors(route, doc)) {
    const schema = doc.sameShapeErrors?.includes(status) && !('text' in success)
      ? schemaOf(success as ZodType, 'output')
      : { $ref: '#/components/schemas/ErrorBody' };
    responses[String(status)] = { description: errorDescription(status), content: { 'application/json': { schema } } };
  }
  if (route.config.rateClass !== 'exempt') {
    for (const [status, response] of Object.entries(responses) as [string, Json][]) {
      if (status === '429') response.headers = RATE_LIMITED_HEADERS;
      else if (Number(status) < 400) response.headers = { ...(response.headers as Json | undefined), ...RATE_LIMIT_HEADERS };
    }
  }
  const op: Json = {
    operationId: `${route.method.toLowerCase()}${openApiPath(route.url).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: doc.summary,
    description: [doc.description, permission ? `Permission: \`${permission}\`.` : 'No API key needed.'].filter(Boolean).join('\n\n'),
    tags: [doc.tag],
    'x-permission': permission ?? null,
    'x-rate-class': route.config.rateClass ?? 'standard',
    security: route.config.public ? [] : [{ bearerAuth: [] }],
    parameters: [...parameters(doc.params, 'path'), ...parameters(doc.query, 'query')],
    responses,
  };
  if (doc.body) {
    op.requestBody = { required: !doc.bodyOptional, content: { 'application/json': { schema: schemaOf(doc.body, 'input') } } };
  }
  return op;
}

/** Fastify's `/v1/jobs/:id` → OpenAPI's `/v1/jobs/{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/**
 * The OpenAPI 3.1 document of the routes a server registered (so it lists exactly what
 * this server answers), from each route's one declaration (server/define-route.ts): the zod
 * contracts it parses and answers with. Routes registered without one are listed in
 * `undocumented` for the completeness test to catch.
 */
export function buildOpenApiDocument(routes: readonly RegisteredRoute[], version: string): { document: Json; undocumented: string[] } {
  const paths: Record<string, Json> = {};
  const undocumented: string[] = [];
  for (const route of routes) {
    if (route.method === 'HEAD' || route.method === 'OPTIONS') continue;
    const path = openApiPath(route.url);
    const doc = route.config.contract;
    if (!doc) {
      undocumented.push(`${route.method} ${path}`);
      continue;
    }
    paths[path] = { ...(paths[path] ?? {}), [route.method.toLowerCase()]: operation(route, doc) };
  }
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'Agent execution memory service',
      version,
      description: 'Execution memory and evaluation for AI agents: learn, recall, evaluate and more. Every error body carries a stable `code`.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (`svc_…`), an env key, or an OIDC token.' } },
      schemas: { ErrorBody: schemaOf(ErrorBody, 'output') },
    },
  };
  return { document, undocumented };
}
