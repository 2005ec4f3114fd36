/**
 * Every registered route × every role, generated from the server's own route registry (each
 * route's declaration, server/define-route.ts) and src/core/permissions.ts: a role holding the route's permission is let through (whatever the
 * route then answers), a role lacking it gets 403 naming the permission. A new route is
 * covered without editing this file.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRoutes, type RegisteredRoute } from '../../server/route-registry.js';
import { hasPermission, PERMISSIONS } from '../../src/core/permissions.js';
import { ROLES } from '../../src/core/types.js';
import { requirePostgres } from '../support/pg.js';
import { bearer, perFileDatabase, provisionKey, startDbServer, type DbServer } from './db-auth-helpers.js';

const hasPg = await requirePostgres('permission matrix');
const database = perFileDatabase('perm_matrix');

/** Routes that take no API key, each with its own credential (or none). Reviewed by hand on purpose. */
const PUBLIC_ROUTES = new Set(['GET /v1/version', 'GET /livez', 'GET /readyz', 'GET /v1/openapi.json', 'POST /v1/keys/bootstrap', 'GET /metrics', 'POST /v1/billing/webhook', 'GET /console', 'GET /console/assets/:file']);

/** A concrete path for a route pattern: ids that exist nowhere, so nothing real is touched. */
function concretePath(url: string): string {
  return url.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    if (name === 'key') return encodeURIComponent('patterns/matrix0000000000');
    if (name === 'id') return randomUUID();
    if (name === 'window') return 'daily';
    return `matrix-${name}`;
  });
}

const name = (r: RegisteredRoute) => `${r.method} ${r.url}`;

describe.skipIf(!hasPg)('permission matrix (routes × roles)', () => {
  let t: DbServer;
  let routes: RegisteredRoute[];

  beforeAll(async () => {
    t = await startDbServer((await database.schema()).url, { SERVICE_METRICS: 'true' });
    routes = [...registeredRoutes(t.server)];
  });
  afterAll(async () => {
    await t?.close();
    await database.drop();
  });

  it('sees the whole API in the registry, and every route declares a known permission or is public', () => {
    const names = routes.map(name);
    for (const expected of ['POST /v1/learn', 'POST /v1/recall', 'GET /v1/keys', 'POST /v1/keys/:id/rotate', 'DELETE /v1/patterns/:key', 'GET /v1/version']) {
      expect(names).toContain(expected);
    }
    for (const route of routes) {
      expect(route.config.contract, `${name(route)} is declared with defineRoute`).toMatchObject({ method: route.method, url: route.url });
      if (route.config.public) {
        expect(PUBLIC_ROUTES.has(name(route)), `${name(route)} is public`).toBe(true);
        continue;
      }
      expect(Object.keys(PERMISSIONS), `${name(route)} permission`).toContain(route.config.permission);
    }
  });

  it('lets each role through exactly where its permission allows; elsewhere 403 naming the permission', async () => {
    const checked: string[] = [];
    for (const [i, route] of routes.entries()) {
      const permission = route.config.permission;
      if (route.config.public || !permission) continue;
      for (const role of ROLES) {
        // A project per route and role: whatever an allowed call does (delete a scope, revoke
        // keys) cannot disturb the next call.
        const key = await provisionKey(t.keyStore, { tenant_id: 'matrix', project_id: `r${i}-${role}`, role });
        // The route's own declaration says whether it takes a body.
        const withBody = route.config.contract?.body !== undefined;
        const res = await t.call(route.method as 'GET', concretePath(route.url), withBody ? {} : undefined, bearer(key.secret));
        const label = `${role} → ${name(route)} (${permission}): ${res.statusCode} ${res.body.slice(0, 200)}`;
        expect(res.statusCode, label).not.toBe(401);
        if (hasPermission(role, permission)) {
          // Let through: the route itself may still refuse the empty request (422, 404, 501…),
          // but never for lack of this permission.
          expect(res.statusCode === 403 && res.json().detail.includes(`"${permission}"`), label).toBe(false);
          // 501 (no LLM configured) and 503 are answers too; a 500 would be a bug.
          expect(res.statusCode, label).not.toBe(500);
        } else {
          expect(res.statusCode, label).toBe(403);
          expect(res.json().detail, label).toContain(`"${permission}"`);
          expect(res.json().detail, label).toContain(role);
        }
        checked.push(`${role} ${name(route)}`);
      }
    }
    expect(checked.length).toBe(routes.filter((r) => !r.config.public).length * ROLES.length);
  });
});
