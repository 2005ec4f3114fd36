import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestSpan, Tracer } from '../../src/ports/tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span (tracing on). */
    traceSpan?: RequestSpan;
  }
}

/**
 * One server span per request, named by method and route template (never the raw URL: a GET
 * recall carries task text in its query). Its parent is the caller's W3C traceparent; the
 * rest of the request (hooks, route, services) runs inside it, so embedding, storage and LLM
 * spans nest under it. Tenant and project are added once auth has decided them.
 */
export function installTracing(app: FastifyInstance, tracer: Tracer): void {
  if (!tracer.enabled) return;
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const span = tracer.startRequest(`${request.method} ${route}`, request.headers, {
      'http.request.method': request.method,
      'http.route': route,
    });
    request.traceSpan = span;
    span.run(done);
  });
  app.addHook('onResponse', async (request, reply) => {
    const span = request.traceSpan;
    if (!span) return;
    span.setAttributes(scopeAttributes(request));
    span.end(reply.statusCode);
  });
}

function scopeAttributes(request: FastifyRequest): Record<string, string> {
  const scope = request.scope;
  return scope ? { 'tenant.id': scope.tenant_id, 'project.id': scope.project_id } : {};
}
