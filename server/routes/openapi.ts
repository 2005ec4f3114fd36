import type { FastifyInstance } from 'fastify';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import { registeredRoutes } from '../route-registry.js';

/** GET /v1/openapi.json (no auth): the document of exactly the routes this server has. */
export function openApiRoutes(app: FastifyInstance, meta: { version: string }): void {
  let cached: unknown = null;
  defineRoute(app, routes.openApi, {
    public: true, rateClass: 'exempt',
    tag: 'health', summary: 'This OpenAPI 3.1 document (no authentication).',
    handler: () => {
      // Built on first request, when every route (plugins included) is registered.
      cached ??= buildOpenApiDocument(registeredRoutes(app), meta.version).document;
      return cached;
    },
  });
}
