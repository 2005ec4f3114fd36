import { ciEnvironment, type CiEnvironment } from './ci-environment.js';
import { str, type Env } from './env-readers.js';

/** Settings of the CLI client (commands read these, never process.env). */
export interface ClientEnv {
  url: string;
  apiKey: string | null;
  project: string | null;
  bootstrapToken: string | null;
  noColor: boolean;
  ci: boolean;
  /** GITHUB_STEP_SUMMARY: a file CI renders as the job's summary (`evaluate` appends Markdown). */
  stepSummary?: string | null;
  /** The CI job's provider, commit and branch (`evaluate` records them in its run). */
  ciRun?: CiEnvironment;
}

/**
 * Client settings with an --env-file's variables (+) beneath the real environment's: a
 * variable set in the shell wins, as with `node --env-file`.
 */
export function loadClientEnvWithFile(fileVars: Env): ClientEnv {
  return loadClientEnv({ ...fileVars, ...process.env });
}

export function loadClientEnv(env: Env = process.env): ClientEnv {
  return {
    url: str(env, 'SERVICE_URL') ?? 'http://127.0.0.1:8000',
    apiKey: str(env, 'SERVICE_API_KEY'),
    project: str(env, 'SERVICE_PROJECT'),
    bootstrapToken: str(env, 'SERVICE_BOOTSTRAP_TOKEN'),
    // NO_COLOR (no-color.org) or FORCE_COLOR=0 (the other convention's "off") turn colour off.
    noColor: (env.NO_COLOR !== undefined && env.NO_COLOR !== '') || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false',
    ci: str(env, 'CI') !== null && env.CI !== 'false',
    stepSummary: str(env, 'GITHUB_STEP_SUMMARY'),
    ciRun: ciEnvironment(env),
  };
}
