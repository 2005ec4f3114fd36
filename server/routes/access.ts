import type { FastifyInstance } from 'fastify';
import { permissionsOf, readableClassifications } from '../../src/core/permissions.js';
import { routes } from '../../src/contracts/routes.js';
import { authed } from '../context.js';
import { defineRoute } from '../define-route.js';

/**
 * (+) GET /v1/access: the caller's role, its permissions and what it may browse, read from the
 * one permission table, so the console offers only what the server will do for this key (the
 * server still decides every request). Any key may ask (the `health` permission every role has).
 */
export function accessRoutes(app: FastifyInstance): void {
  defineRoute(app, routes.access, {
    permission: 'health',
    tag: 'keys', summary: '(+) The calling key\'s role, its permissions and the classifications it may browse.',
    handler: (_input, request) => {
      const { role } = authed(request).principal;
      return { role, permissions: permissionsOf(role), classifications: [...readableClassifications(role)] };
    },
  });
}
