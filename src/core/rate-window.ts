/**
 * Fixed-window rate limiting (docs/behavior.md "Rate limits"): the window maths, the step of a
 * shared counter, and the in-memory pre-check that spares a client far under its limit the
 * database round trip. Pure: the limiters (src/adapters/rate-limit/) bring the clock and the I/O.
 */

/** What a limiter answers for one request. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the window as this process knows it (0 when refused). */
  remaining: number;
  /** Whole seconds until the window turns (at least 1). */
  resetSeconds: number;
  /** True on the first refusal of a bucket in a window (across every process sharing the count). */
  firstRefusal: boolean;
}

export interface RateWindow {
  /** Windows since the epoch: every process with the same clock and length agrees on it. */
  index: number;
  startMs: number;
  resetSeconds: number;
}

/** The clock-aligned window `nowMs` falls in. */
export function rateWindow(nowMs: number, windowMs: number): RateWindow {
  const index = Math.floor(nowMs / windowMs);
  const startMs = index * windowMs;
  return { index, startMs, resetSeconds: Math.max(1, Math.ceil((startMs + windowMs - nowMs) / 1000)) };
}

/** The most requests one round trip may take for a process to admit on its own. */
export const MAX_GRANT = 16;
/** A process asks for at most this share of what its last answer said was left. */
export const GRANT_SHARE = 8;

/**
 * How many requests to take from the shared count in one round trip, given the count this
 * process last saw: 1/GRANT_SHARE of what was left, 1 to MAX_GRANT. Near the limit every
 * request asks alone (below 2 × GRANT_SHARE left), so the last grants go where requests are.
 */
export function grantSize(knownCount: number, limit: number): number {
  return Math.max(1, Math.min(MAX_GRANT, Math.floor((limit - knownCount) / GRANT_SHARE)));
}

/**
 * One step of a shared counter, as the PostgreSQL statement does it atomically: below the limit
 * up to `take` are granted and the count never passes the limit; at or past it nothing is
 * granted and the count goes up by one, so the refusal that finds it exactly at the limit is
 * the window's first.
 */
export function stepCount(count: number, take: number, limit: number): { count: number; granted: number } {
  if (count >= limit) return { count: count + 1, granted: 0 };
  const granted = Math.min(take, limit - count);
  return { count: count + granted, granted };
}

interface BucketState {
  /** Grants taken from the shared count and not used yet. */
  held: number;
  /** The shared count as the last answer gave it. */
  known: number;
}

export type Precheck =
  | { kind: 'allow'; decision: RateDecision }
  | { kind: 'refuse'; decision: RateDecision }
  | { kind: 'ask'; take: number };

/**
 * The pre-check in front of a shared count: each process takes grants in blocks (grantSize)
 * and spends them without a round trip; once a refusal is on record for the window it refuses
 * without one too (a count never goes down within its window). It never admits more than the
 * shared count granted, so the limit holds exactly; a block not spent when the window turns is
 * lost (at most MAX_GRANT − 1 per process and bucket). The state is dropped when the window
 * turns, so memory is bounded by the clients of one window.
 */
export class GrantCache {
  private window = -1;
  private buckets = new Map<string, BucketState>();

  precheck(bucket: string, limit: number, window: RateWindow): Precheck {
    this.turn(window);
    const state = this.buckets.get(bucket);
    if (state && state.held > 0) {
      state.held -= 1;
      return { kind: 'allow', decision: this.decision(true, false, limit, state, window) };
    }
    if (state && state.known > limit) return { kind: 'refuse', decision: this.decision(false, false, limit, state, window) };
    return { kind: 'ask', take: grantSize(state?.known ?? 0, limit) };
  }

  /** Records the shared count's answer to an `ask` (spending one grant on this request). */
  record(bucket: string, limit: number, window: RateWindow, answer: { count: number; granted: number }): RateDecision {
    this.turn(window);
    if (window.index !== this.window) return this.decision(answer.granted > 0, false, limit, { held: 0, known: answer.count }, window);
    const state = this.buckets.get(bucket) ?? { held: 0, known: 0 };
    this.buckets.set(bucket, state);
    // Answers to concurrent asks may arrive out of order: the count only grows.
    state.known = Math.max(state.known, answer.count);
    const allowed = answer.granted > 0;
    if (allowed) state.held += answer.granted - 1;
    return this.decision(allowed, !allowed && answer.count === limit + 1, limit, state, window);
  }

  /** Drops every bucket when the window turns (a late answer for an older window changes nothing). */
  private turn(window: RateWindow): void {
    if (window.index <= this.window) return;
    this.window = window.index;
    this.buckets = new Map();
  }

  private decision(allowed: boolean, firstRefusal: boolean, limit: number, state: BucketState, window: RateWindow): RateDecision {
    // Grants this process holds are still the client's; what other processes hold is not known here.
    const remaining = allowed ? Math.max(0, limit - state.known + state.held) : 0;
    return { allowed, limit, remaining, resetSeconds: window.resetSeconds, firstRefusal };
  }
}

/**
 * A window's counts kept in this process alone: the JSON store's limiter (one process), and
 * what a process falls back to while the shared count does not answer.
 */
export class LocalWindowCounts {
  private window = -1;
  private counts = new Map<string, number>();

  hit(bucket: string, limit: number, window: RateWindow): RateDecision {
    if (window.index !== this.window) {
      this.window = window.index;
      this.counts = new Map();
    }
    const count = (this.counts.get(bucket) ?? 0) + 1;
    this.counts.set(bucket, count);
    const allowed = count <= limit;
    return { allowed, limit, remaining: Math.max(0, limit - count), resetSeconds: window.resetSeconds, firstRefusal: count === limit + 1 };
  }
}
