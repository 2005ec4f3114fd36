import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../src/config.js';
import { RateLimitedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/ports/clock.js';
import { AuditKind, writeAudit } from '../../src/services/audit.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { requestContext, type RateClass } from '../context.js';

const WINDOW_MS = 60_000;

/**
 * Fixed one-minute windows, in memory, per process (the spec's model). All buckets share the
 * clock-aligned window, so the whole table is dropped when the minute turns: memory stays
 * bounded by the clients of one minute, with no sweeper.
 */
export class FixedWindowLimiter {
  private window = -1;
  private counts = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /** Counts one request; `allowed` false past the limit, `firstRefusal` on the first one refused. */
  hit(bucket: string, limit: number): { allowed: boolean; firstRefusal: boolean } {
    const window = Math.floor(this.clock.now().getTime() / WINDOW_MS);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const count = (this.counts.get(bucket) ?? 0) + 1;
    this.counts.set(bucket, count);
    return { allowed: count <= limit, firstRefusal: count === limit + 1 };
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
export function installRateLimits(app: FastifyInstance, deps: ServiceDeps, limits: Config['rateLimit']): {
  perKey: (request: FastifyRequest) => Promise<void>;
} {
  const limiter = new FixedWindowLimiter(deps.clock);

  const refuse = async (request: FastifyRequest, bucket: string, firstRefusal: boolean): Promise<never> => {
    // One audit event per client and window, not one per refused request (a flood would
    // otherwise flood the audit log too).
    if (firstRefusal) {
      await writeAudit(deps, AuditKind.rateLimited, request.scope, requestContext(request), { bucket: bucket.split(':')[0], path: request.routeOptions.url ?? null });
    }
    throw new RateLimitedError();
  };

  app.addHook('onRequest', async (request) => {
    const rateClass = rateClassOf(request);
    if (rateClass === 'exempt' || request.method === 'OPTIONS') return;
    const limit = rateClass === 'expensive' ? limits.expensive : limits.default;
    const bucket = `${rateClass}:${request.ip}`;
    const { allowed, firstRefusal } = limiter.hit(bucket, limit);
    if (!allowed) await refuse(request, bucket, firstRefusal);
  });

  return {
    perKey: async (request) => {
      const key = request.principal?.rateKey;
      if (!key || rateClassOf(request) === 'exempt') return;
      const bucket = `key:${key}`;
      const { allowed, firstRefusal } = limiter.hit(bucket, limits.perKey);
      if (!allowed) await refuse(request, bucket, firstRefusal);
    },
  };
}
