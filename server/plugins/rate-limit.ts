import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../src/config/index.js';
import { RateLimitedError } from '../../src/core/errors.js';
import type { RateDecision, RateLimiter } from '../../src/ports/rate-limiter.js';
import { AuditKind, writeAudit } from '../../src/services/audit.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { requestContext, type RateClass } from '../context.js';

function rateClassOf(request: FastifyRequest): RateClass {
  return request.routeOptions.config?.rateClass ?? 'standard';
}

/** The decision a client should pace itself by: the one with the fewest requests left. */
function tighter(a: RateDecision | null, b: RateDecision): RateDecision {
  if (!a) return b;
  return b.remaining < a.remaining || (b.remaining === a.remaining && b.limit < a.limit) ? b : a;
}

/**
 * Per IP (before auth, so key guessing is limited too): standard and expensive endpoints in
 * separate windows. request.ip honours X-Forwarded-For only from SERVICE_TRUSTED_PROXIES
 * (Fastify's trustProxy). Per key (after auth): one window across all paths. The counting is
 * the limiter's (src/app.ts picks it: docs/behavior.md "Rate limits"); a limited route's
 * successful answers and its rate-limit 429 carry RateLimit-Limit, -Remaining and -Reset of
 * its tightest decision.
 */
export function installRateLimits(app: FastifyInstance, deps: ServiceDeps, limiter: RateLimiter, limits: Config['http']['rateLimit']): {
  perKey: (request: FastifyRequest) => Promise<void>;
} {
  app.decorateRequest('rateLimit', null);

  const count = async (request: FastifyRequest, bucket: string, limit: number): Promise<void> => {
    const decision = await limiter.hit(bucket, limit);
    request.rateLimit = decision.allowed ? tighter(request.rateLimit, decision) : decision;
    if (decision.allowed) return;
    // One audit event per client and window, not one per refused request (a flood would
    // otherwise flood the audit log too).
    if (decision.firstRefusal) {
      await writeAudit(deps, AuditKind.rateLimited, request.scope, requestContext(request), { bucket: bucket.split(':')[0], path: request.routeOptions.url ?? null });
    }
    throw new RateLimitedError(`rate limit exceeded, retry in ${decision.resetSeconds} seconds`, {
      limit, resetSeconds: decision.resetSeconds, windowSeconds: limits.windowSeconds,
    });
  };

  app.addHook('onRequest', async (request) => {
    const rateClass = rateClassOf(request);
    if (rateClass === 'exempt' || request.method === 'OPTIONS') return;
    const limit = rateClass === 'expensive' ? limits.expensive : limits.default;
    await count(request, `${rateClass}:${request.ip}`, limit);
  });

  app.addHook('onSend', async (request, reply) => {
    const decision = request.rateLimit;
    // On answers that succeeded or were refused by the limit, never on other errors: clients
    // (ours included, src/client/transport.ts) wait for RateLimit-Reset on any 429 or 503, and
    // a quota 429 or a storage 503 must not read as "come back when the window turns".
    if (!decision || (decision.allowed && reply.statusCode >= 400)) return;
    reply.header('ratelimit-limit', String(decision.limit));
    reply.header('ratelimit-remaining', String(decision.remaining));
    reply.header('ratelimit-reset', String(decision.resetSeconds));
  });

  return {
    perKey: async (request) => {
      const key = request.principal?.rateKey;
      if (!key || rateClassOf(request) === 'exempt') return;
      await count(request, `key:${key}`, limits.perKey);
    },
  };
}
