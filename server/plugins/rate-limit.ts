import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../src/config/index.js';
import { RateLimitedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/ports/clock.js';
import { AuditKind, writeAudit } from '../../src/services/audit.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { requestContext, type RateClass } from '../context.js';

export interface Hit {
  allowed: boolean;
  /** True on the first refusal of a bucket in a window. */
  firstRefusal: boolean;
  /** Whole seconds until the window turns (at least 1). */
  resetSeconds: number;
}

/**
 * Fixed windows (one minute by the spec; SERVICE_RATE_LIMIT_WINDOW_SECONDS (+) for tests), in
 * memory, per process. All buckets share the clock-aligned window, so the whole table is
 * dropped when the window turns: memory stays bounded by the clients of one window, with no
 * sweeper.
 */
export class FixedWindowLimiter {
  private window = -1;
  private counts = new Map<string, number>();

  constructor(private readonly clock: Clock, private readonly windowMs = 60_000) {}

  /** Counts one request; `allowed` false past the limit, `firstRefusal` on the first one refused. */
  hit(bucket: string, limit: number): Hit {
    const now = this.clock.now().getTime();
    const window = Math.floor(now / this.windowMs);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const count = (this.counts.get(bucket) ?? 0) + 1;
    this.counts.set(bucket, count);
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * this.windowMs - now) / 1000));
    return { allowed: count <= limit, firstRefusal: count === limit + 1, resetSeconds };
  }
}

function rateClassOf(request: FastifyRequest): RateClass {
  return request.routeOptions.config?.rateClass ?? 'standard';
}

/**
 * Per IP (before auth, so key guessing is limited too): standard and expensive endpoints in
 * separate windows. request.ip honours X-Forwarded-For only from SERVICE_TRUSTED_PROXIES
 * (Fastify's trustProxy). Per key (after auth): one window across all paths.
 */
export function installRateLimits(app: FastifyInstance, deps: ServiceDeps, limits: Config['http']['rateLimit']): {
  perKey: (request: FastifyRequest) => Promise<void>;
} {
  const limiter = new FixedWindowLimiter(deps.clock, limits.windowSeconds * 1000);

  const refuse = async (request: FastifyRequest, bucket: string, limit: number, hit: Hit): Promise<never> => {
    // One audit event per client and window, not one per refused request (a flood would
    // otherwise flood the audit log too).
    if (hit.firstRefusal) {
      await writeAudit(deps, AuditKind.rateLimited, request.scope, requestContext(request), { bucket: bucket.split(':')[0], path: request.routeOptions.url ?? null });
    }
    throw new RateLimitedError(`rate limit exceeded, retry in ${hit.resetSeconds} seconds`, {
      limit, resetSeconds: hit.resetSeconds, windowSeconds: limits.windowSeconds,
    });
  };

  app.addHook('onRequest', async (request) => {
    const rateClass = rateClassOf(request);
    if (rateClass === 'exempt' || request.method === 'OPTIONS') return;
    const limit = rateClass === 'expensive' ? limits.expensive : limits.default;
    const bucket = `${rateClass}:${request.ip}`;
    const hit = limiter.hit(bucket, limit);
    if (!hit.allowed) await refuse(request, bucket, limit, hit);
  });

  return {
    perKey: async (request) => {
      const key = request.principal?.rateKey;
      if (!key || rateClassOf(request) === 'exempt') return;
      const bucket = `key:${key}`;
      const hit = limiter.hit(bucket, limits.perKey);
      if (!hit.allowed) await refuse(request, bucket, limits.perKey, hit);
    },
  };
}
