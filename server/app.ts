import cors from '@fastify/cors';
import { importOptional } from '../src/core/optional-module.js';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { App } from '../src/app.js';
import { noopTracer } from '../src/ports/tracing.js';
import type { Authenticator } from './auth/authenticator.js';
import { authenticatorFor } from './auth/select.js';
import { installAuth } from './plugins/auth.js';
import { frameworkErrorHandler, installErrorHandling } from './plugins/errors.js';
import { installMaintenance } from './plugins/maintenance.js';
import { installRateLimits } from './plugins/rate-limit.js';
import { installRequestId, requestIdFrom } from './plugins/request-id.js';
import { OneLinePerRequest } from './plugins/request-log.js';
import { installRequestMetrics } from './plugins/request-metrics.js';
import { installTracing } from './plugins/tracing.js';
import { installResponseCheck } from './openapi/response-check.js';
import { installRouteRegistry } from './route-registry.js';
import { analyticsRoutes } from './routes/analytics.js';
import { billingRoutes } from './routes/billing.js';
import { consoleRoutes } from './routes/console.js';
import { governanceRoutes } from './routes/governance.js';
import { governanceDataRoutes } from './routes/governance-data.js';
import { healthRoutes } from './routes/health.js';
import { evaluationRoutes } from './routes/evaluations.js';
import { jobRoutes } from './routes/jobs.js';
import { accessRoutes } from './routes/access.js';
import { keyRoutes } from './routes/keys.js';
import { llmRoutes } from './routes/llm.js';
import { memoryRoutes } from './routes/memory.js';
import { metricsRoutes } from './routes/metrics.js';
import { openApiRoutes } from './routes/openapi.js';
import { importExportRoutes } from './routes/import-export.js';
import { recallBatchRoute } from './routes/recall-batch.js';
import { readVersionInfo } from './version.js';
import { routableUrl } from './reference-paths.js';
import { decodeUtf8Body } from './utf8-body.js';
import { MAX_TASK_CHARS } from '../src/core/vocabulary.js';

export interface BuildServerOptions {
  /** Replaces the authenticator of the configured mode (DB keys and OIDC plug in here). */
  authenticator?: Authenticator;
  /** Tests: check every JSON answer against its documented contract (see response-check.ts). */
  checkResponses?: boolean;
}

/**
 * The request line and headers may hold a GET /v1/recall whose task is as long as its
 * documented limit allows, whatever its characters: percent-encoded, one UTF-16 unit of the
 * task takes up to 9 bytes of URL (a 3-byte character; a 4-byte one is two units in 12 bytes).
 * Node's own 16 KiB stays the room for everything else (other fields, auth, proxies' headers).
 */
const MAX_HEADER_BYTES = MAX_TASK_CHARS * 9 + 16 * 1024;

/**
 * The HTTP server around a composed App. Never listens: `service serve` does, tests inject.
 * Hook order on every request: CORS preflight → request id → maintenance → per-IP rate limit
 * → auth, scope, permission, per-key rate limit → body parsing → route → errors → metrics.
 */
export async function buildServer(app: App, options: BuildServerOptions = {}): Promise<FastifyInstance> {
  const { deps } = app;
  const { config } = deps;
  const authenticator = options.authenticator ?? authenticatorFor(app);
  const maybePino = deps.logger as unknown as Partial<FastifyBaseLogger>;
  const isPino = typeof maybePino.child === 'function' && typeof maybePino.level === 'string';

  const server = Fastify({
    // Fastify needs a full pino logger; an injected minimal Logger (tests) means no request logs.
    loggerInstance: isPino ? (maybePino as FastifyBaseLogger) : undefined,
    logger: isPino ? undefined : false,
    bodyLimit: config.http.maxBodySize,
    // One line per request instead of Fastify's two (plugins/request-log.ts).
    logController: new OneLinePerRequest(),
    genReqId: requestIdFrom,
    requestIdHeader: false,
    // request.ip is the X-Forwarded-For client only when the peer is a trusted proxy.
    trustProxy: config.http.trustedProxies.length > 0 ? [...config.http.trustedProxies] : false,
    routerOptions: { ignoreTrailingSlash: true },
    // The reference client's unencoded pattern keys (server/reference-paths.ts).
    rewriteUrl: (req) => routableUrl(req.url ?? '/'),
    frameworkErrors: frameworkErrorHandler,
    // Slow clients (docs/behavior.md "Faults"): a request must arrive whole within requestTimeout, an idle
    // keep-alive connection closes after keepAliveTimeout; headersTimeout is set just below.
    requestTimeout: config.http.server.timeouts.requestMs,
    keepAliveTimeout: config.http.server.timeouts.keepAliveMs,
    http: { maxHeaderSize: MAX_HEADER_BYTES },
  });
  // Node requires headersTimeout ≤ requestTimeout.
  server.server.headersTimeout = Math.min(config.http.server.timeouts.headersMs, config.http.server.timeouts.requestMs);

  if (config.http.corsOrigins.length > 0) {
    // Registered first: its hook answers preflights before auth would refuse them.
    await server.register(cors, { origin: [...config.http.corsOrigins], exposedHeaders: ['x-request-id', 'x-recall-mode', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'] });
  }
  installRouteRegistry(server);
  // First hook of all: everything after it (auth included) runs inside the request's span.
  installTracing(server, deps.tracer ?? noopTracer);
  installJsonBodies(server);
  installErrorHandling(server, config.http.maxBodySize);
  installRequestId(server);
  installMaintenance(server, config.http.maintenance);
  const rateLimits = installRateLimits(server, deps, config.http.rateLimit);
  installAuth(server, deps, authenticator, rateLimits.perKey);
  installRequestMetrics(server, app.metrics);
  if (options.checkResponses) installResponseCheck(server);

  const version = await readVersionInfo();
  healthRoutes(server, deps, { version, startedAt: app.startedAt });
  openApiRoutes(server, { version: version.app_version });
  memoryRoutes(server, deps);
  recallBatchRoute(server, deps);
  importExportRoutes(server, deps);
  metricsRoutes(server, deps, app.metrics);
  llmRoutes(server, deps);
  jobRoutes(server, deps);
  evaluationRoutes(server, deps);
  analyticsRoutes(server, deps);
  governanceRoutes(server, deps);
  governanceDataRoutes(server, deps);
  billingRoutes(server, deps.billing);
  keyRoutes(server, deps, authenticator.mode);
  accessRoutes(server);
  consoleRoutes(server, { enabled: config.http.console.enabled });
  if (config.http.mcp.enabled) {
    // Loaded only when enabled: the MCP SDK stays out of every other server.
    const { mcpRoutes } = await importOptional(() => import('./mcp/routes.js'), 'SERVICE_MCP=true', 'npm install @modelcontextprotocol/sdk@1');
    mcpRoutes(server, (await readVersionInfo()).app_version);
  }

  if (authenticator.mode === 'dev') deps.logger.warn({ auth: authenticator.mode }, authenticator.description);
  else deps.logger.info({ auth: authenticator.mode }, `authentication: ${authenticator.description}`);
  await remindAboutBootstrapToken(app, authenticator.mode);

  return server;
}

/** The bootstrap token opens POST /v1/keys/bootstrap; once used it should leave the environment. */
async function remindAboutBootstrapToken(app: App, mode: Authenticator['mode']): Promise<void> {
  if (app.deps.config.auth.bootstrapToken === null) return;
  const { logger, keyStore } = app.deps;
  if (mode !== 'db' || !keyStore) {
    logger.warn({ auth: mode }, 'SERVICE_BOOTSTRAP_TOKEN is set but unused: bootstrap needs DB auth mode; remove it');
    return;
  }
  const used = await keyStore.tenants.anyKeyExists().catch(() => false);
  logger.warn(
    { auth: mode },
    used
      ? 'SERVICE_BOOTSTRAP_TOKEN is still set although API keys exist: remove it from the environment (bootstrap is closed)'
      : 'SERVICE_BOOTSTRAP_TOKEN is set: run `service bootstrap` once, then remove the token from the environment',
  );
}

/**
 * Bodies are JSON only: other media types (text/plain included) are refused with 422, bytes
 * that are not UTF-8 with 400 naming the first bad one (server/utf8-body.ts), an empty JSON
 * body counts as "no body" (bodyless operations like aging), and prototype-poisoning keys are
 * rejected by Fastify's secure parser.
 */
function installJsonBodies(server: FastifyInstance): void {
  const secureJson = server.getDefaultJsonParser('error', 'error');
  server.removeAllContentTypeParsers();
  server.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = decodeUtf8Body(body as Buffer);
    } catch (err) {
      done(err as Error, undefined);
      return;
    }
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    secureJson(request, text, done);
  });
}
