import cors from '@fastify/cors';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { App } from '../src/app.js';
import { createAuthenticator, type Authenticator } from './auth/authenticator.js';
import { installAuth } from './plugins/auth.js';
import { installErrorHandling } from './plugins/errors.js';
import { installMaintenance } from './plugins/maintenance.js';
import { installRateLimits } from './plugins/rate-limit.js';
import { installRequestId, requestIdFrom } from './plugins/request-id.js';
import { installRequestMetrics } from './plugins/request-metrics.js';
import { healthRoutes } from './routes/health.js';
import { llmRoutes } from './routes/llm.js';
import { memoryRoutes } from './routes/memory.js';
import { metricsRoutes } from './routes/metrics.js';
import { transferRoutes } from './routes/transfer.js';
import { readVersionInfo } from './version.js';

export interface BuildServerOptions {
  /** Replaces the authenticator of the configured mode (DB keys and OIDC plug in here). */
  authenticator?: Authenticator;
}

/**
 * The HTTP server around a composed App. Never listens: `service serve` does, tests inject.
 * Hook order on every request: CORS preflight → request id → maintenance → per-IP rate limit
 * → auth, scope, permission, per-key rate limit → body parsing → route → errors → metrics.
 */
export async function buildServer(app: App, options: BuildServerOptions = {}): Promise<FastifyInstance> {
  const { deps } = app;
  const { config } = deps;
  const authenticator = options.authenticator ?? createAuthenticator(config);
  const maybePino = deps.logger as unknown as Partial<FastifyBaseLogger>;
  const isPino = typeof maybePino.child === 'function' && typeof maybePino.level === 'string';

  const server = Fastify({
    // Fastify needs a full pino logger; an injected minimal Logger (tests) means no request logs.
    loggerInstance: isPino ? (maybePino as FastifyBaseLogger) : undefined,
    logger: isPino ? undefined : false,
    bodyLimit: config.maxBodySize,
    genReqId: requestIdFrom,
    requestIdHeader: false,
    // request.ip is the X-Forwarded-For client only when the peer is a trusted proxy.
    trustProxy: config.trustedProxies.length > 0 ? [...config.trustedProxies] : false,
    routerOptions: { ignoreTrailingSlash: true },
  });

  if (config.corsOrigins.length > 0) {
    // Registered first: its hook answers preflights before auth would refuse them.
    await server.register(cors, { origin: [...config.corsOrigins], exposedHeaders: ['x-request-id', 'x-recall-mode', 'retry-after'] });
  }
  installJsonBodies(server);
  installErrorHandling(server, config.maxBodySize);
  installRequestId(server);
  installMaintenance(server, config.maintenance);
  const rateLimits = installRateLimits(server, deps, config.rateLimit);
  installAuth(server, deps, authenticator, rateLimits.perKey);
  installRequestMetrics(server, app.metrics);

  healthRoutes(server, deps, { version: await readVersionInfo(), startedAt: app.startedAt });
  memoryRoutes(server, deps);
  transferRoutes(server, deps);
  metricsRoutes(server, deps, app.metrics);
  llmRoutes(server, deps);

  if (authenticator.mode === 'dev') deps.logger.warn({ auth: authenticator.mode }, authenticator.description);
  else deps.logger.info({ auth: authenticator.mode }, `authentication: ${authenticator.description}`);

  return server;
}

/**
 * Bodies are JSON only: other media types (text/plain included) are refused with 422, an empty
 * JSON body counts as "no body" (bodyless operations like aging), and prototype-poisoning keys
 * are rejected by Fastify's secure parser.
 */
function installJsonBodies(server: FastifyInstance): void {
  const secureJson = server.getDefaultJsonParser('error', 'error');
  server.removeAllContentTypeParsers();
  server.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string).trim() === '') {
      done(null, undefined);
      return;
    }
    secureJson(request, body as string, done);
  });
}
