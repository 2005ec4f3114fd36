/** Time source; services never call Date.now() so tests can set the time. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
