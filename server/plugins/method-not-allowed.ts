import type { FastifyInstance } from 'fastify';
import { registeredRoutes } from '../route-registry.js';

const matchers = new WeakMap<FastifyInstance, { method: string; pattern: RegExp }[]>();

/** `/v1/jobs/:id` → a regex matching one path segment per parameter. */
function toPattern(url: string): RegExp {
  const body = url
    .replace(/\/+$/, '')
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}/?$`);
}

/**
 * The methods registered for `path` (empty when no route has that path). Built once per
 * server from the route registry, after every route is in (the first unmatched request).
 */
export function allowedMethods(app: FastifyInstance, path: string): string[] {
  let list = matchers.get(app);
  if (!list) {
    list = registeredRoutes(app).map((r) => ({ method: r.method, pattern: toPattern(r.url) }));
    matchers.set(app, list);
  }
  const methods = new Set(list.filter((m) => m.pattern.test(path)).map((m) => m.method));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
