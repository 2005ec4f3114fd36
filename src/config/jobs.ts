import { num, type Env } from './env-readers.js';

/** The background job runner. */
export interface JobsSettings {
  /** staleSeconds (+): a running job without a heartbeat for this long was left by a dead worker. */
  jobs: { pollIntervalSeconds: number; maxConcurrent: number; staleSeconds: number };
}

export function jobsSettings(env: Env): JobsSettings {
  return {
    jobs: {
      pollIntervalSeconds: num(env, 'SERVICE_JOB_POLL_INTERVAL', 2.0, { min: 0.05, max: 3600 }),
      maxConcurrent: num(env, 'SERVICE_JOB_MAX_CONCURRENT', 3, { min: 1, max: 100, int: true }),
      staleSeconds: num(env, 'SERVICE_JOB_STALE_SECONDS', 60, { min: 1, max: 86_400 }),
    },
  };
}
