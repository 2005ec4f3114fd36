import { LocalWindowCounts, rateWindow, type RateDecision } from '../../core/rate-window.js';
import type { Clock } from '../../ports/clock.js';
import type { RateLimiter } from '../../ports/rate-limiter.js';

/**
 * The limiter of one process (docs/behavior.md "Rate limits"): fixed clock-aligned windows in
 * memory, exact for that process. The JSON store's limiter (a JSON store has one process).
 */
export function createMemoryRateLimiter(clock: Clock, windowMs: number): RateLimiter {
  const counts = new LocalWindowCounts();
  return {
    kind: 'memory',
    hit(bucket: string, limit: number): Promise<RateDecision> {
      return Promise.resolve(counts.hit(bucket, limit, rateWindow(clock.now().getTime(), windowMs)));
    },
    close: () => Promise.resolve(),
  };
}
