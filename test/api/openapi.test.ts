import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../server/openapi/document.js';
import { registeredRoutes } from '../../server/route-registry.js';
import { startServer, type TestServer } from './helpers.js';
import { requirePostgres } from '../support/pg.js';
import { perFileDatabase, startDbServer } from './db-auth-helpers.js';

const hasPg = await requirePostgres('OpenAPI completeness in DB auth mode');
const database = perFileDatabase('openapi_docs');

/**
 * The OpenAPI document: valid OpenAPI 3.1 (checked by a real validator), and complete: every
 * route a server registers has a description, and every description a route.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startServer();
});
afterAll(async () => {
  await t?.close();
  if (hasPg) await database.drop();
});

describe('GET /v1/openapi.json', () => {
  it('serves a valid OpenAPI 3.1 document without authentication', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes each route with its permission, bodies and error statuses', async () => {
    const doc = (await t.server.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const learn = doc.paths['/v1/learn'].post;
    expect(learn['x-permission']).toBe('learn');
    expect(learn.requestBody.content['application/json'].schema.required).toEqual(expect.arrayContaining(['task', 'code', 'eval_score']));
    expect(Object.keys(learn.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '413', '422', '429', '500', '503']));
    expect(doc.paths['/v1/version'].get.security).toEqual([]);
    expect(doc.paths['/v1/jobs/{id}'].get.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
    expect(doc.paths['/v1/evaluate'].post.responses['202']).toBeDefined();
    expect(doc.components.schemas.ErrorBody.required).toContain('code');
  });

  it('names the rate-limit headers: RateLimit-* on the successful answers of a limited route and its 429, Retry-After on the 429', async () => {
    const doc = (await t.server.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const learn = doc.paths['/v1/learn'].post.responses;
    expect(Object.keys(learn['200'].headers)).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
    expect(Object.keys(learn['429'].headers)).toEqual(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
    expect(doc.paths['/v1/evaluate'].post.responses['202'].headers).toHaveProperty('Location');
    expect(doc.paths['/v1/evaluate'].post.responses['202'].headers).toHaveProperty('RateLimit-Reset');
    expect(learn['503'].headers).toBeUndefined();
    expect(doc.paths['/v1/version'].get.responses['200'].headers).toBeUndefined();
  });
});

describe('completeness', () => {
  const check = (routes: ReturnType<typeof registeredRoutes>) => {
    const { document, undocumented } = buildOpenApiDocument(routes, 'test');
    expect(undocumented, 'routes registered without defineRoute (server/define-route.ts)').toEqual([]);
    // Each declaration is the route's own: the document lists it under its own method and path.
    for (const route of routes.filter((r) => r.method !== 'HEAD')) {
      expect(route.config.contract, `${route.method} ${route.url}`).toMatchObject({ method: route.method, url: route.url });
    }
    return document;
  };

  it('every registered route is declared with its contract (dev and DB auth, metrics and MCP on)', async () => {
    const metricsOn = await startServer({ SERVICE_METRICS: 'true', SERVICE_MCP: 'true' });
    const db = hasPg ? await startDbServer((await database.schema()).url) : null;
    try {
      const dev = check(registeredRoutes(metricsOn.server));
      expect(Object.keys(dev.paths as object)).toEqual(expect.arrayContaining(['/metrics', '/mcp', '/v1/keys/{id}/rotate']));
      if (db) check(registeredRoutes(db.server));
    } finally {
      await metricsOn.close();
      await db?.close();
    }
  });

  it('a route added without a description is reported', () => {
    const routes = [...registeredRoutes(t.server), { method: 'POST', url: '/v1/brand-new/:id', config: { permission: 'learn' as const } }];
    expect(buildOpenApiDocument(routes, 'test').undocumented).toEqual(['POST /v1/brand-new/{id}']);
  });
});

describe('drift check', () => {
  it('turns an answer that does not match its contract into a 500 naming the field', async () => {
    const { patchedJsonStorage } = await import('./helpers.js');
    const drifting = await patchedJsonStorage((real) => ({
      patterns: { ...real.patterns, count: async () => 'many' as unknown as number },
    }));
    const d = await startServer({}, { storage: drifting });
    try {
      const res = await d.call('GET', '/v1/health');
      expect(res.statusCode).toBe(500);
      expect(res.json().detail).toContain('pattern_count');
    } finally {
      await d.close();
    }
  });
});
