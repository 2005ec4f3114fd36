import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '../openapi/document.js';
import { registeredRoutes } from '../route-registry.js';

/** GET /v1/openapi.json (no auth): the document of exactly the routes this server has. */
export function openApiRoutes(app: FastifyInstance, meta: { version: string }): void {
  let cached: unknown = null;
  app.get('/v1/openapi.json', { config: { public: true, rateClass: 'exempt' } }, async () => {
    // Built on first request, when every route (plugins included) is registered.
    cached ??= buildOpenApiDocument(registeredRoutes(app), meta.version).document;
    return cached;
  });
}
