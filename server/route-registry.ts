import type { FastifyContextConfig, FastifyInstance } from 'fastify';

/** One registered route with what it declared (permission, public, rate class). */
export interface RegisteredRoute {
  method: string;
  url: string;
  config: FastifyContextConfig;
}

const registries = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/**
 * Records every route as it is registered (install before any route). The permission-matrix
 * and tenant-isolation tests are generated from this list, so a new route is covered (or
 * fails them) without anyone editing a hand-written list.
 */
export function installRouteRegistry(server: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  registries.set(server, routes);
  server.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      // HEAD twins of GET routes are added by Fastify itself and share the GET's config.
      if (method === 'HEAD' && route.url && methods.length === 1 && routes.some((r) => r.method === 'GET' && r.url === route.url)) continue;
      routes.push({ method, url: route.url ?? route.path, config: (route.config ?? {}) as FastifyContextConfig });
    }
  });
}

/** The routes of a server built by buildServer, in registration order. */
export function registeredRoutes(server: FastifyInstance): readonly RegisteredRoute[] {
  const routes = registries.get(server);
  if (!routes) throw new Error('this server was not built with a route registry (buildServer installs one)');
  return routes;
}
