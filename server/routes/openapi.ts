import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { defineRoute } from '../define-route.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import { registeredRoutes } from '../route-registry.js';

/** GET /v1/openapi.json (no auth): the document of exactly the routes this server has. */
export function openApiRoutes(app: FastifyInstance, meta: { version: string }): void {
  let cached: unknown = null;
  defineRoute(app, {
    method: 'GET', url: '/v1/openapi.json', public: true, rateClass: 'exempt', response: z.object({ openapi: z.string() }).passthrough(),
    tag: 'health', summary: 'This OpenAPI 3.1 document (no authentication).',
    handler: () => {
      // Built on first request, when every route (plugins included) is registered.
      cached ??= buildOpenApiDocument(registeredRoutes(app), meta.version).document;
      return cached;
    },
  });
}
