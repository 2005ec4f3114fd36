import { InvalidArgumentError, Option, type Command } from 'commander';
import { ServiceClient, type RetryWait } from '../../src/client/index.js';
import { ioOf } from './context.js';
import { createOutput, type Output } from './output.js';
import { cliVersion } from './package-info.js';

/** Values of the client option group, as commander hands them to an action. */
export interface ClientOptionValues {
  url: string;
  apiKey?: string;
  project?: string;
  timeout: number;
  retryWait: number;
  json?: boolean;
  format?: 'table' | 'json';
}

/**
 * Adds the options every client command shares. Defaults come from loadClientEnv()
 * (SERVICE_URL, SERVICE_API_KEY, SERVICE_PROJECT), never from the environment directly.
 */
export function addClientOptions(cmd: Command): Command {
  const env = ioOf(cmd).env;
  const apiKey = new Option('--api-key <key>', 'API key sent as a Bearer token');
  // Show where the default comes from, never the secret itself.
  if (env.apiKey) apiKey.default(env.apiKey, 'SERVICE_API_KEY');
  const project = new Option('--project <id>', 'project id, sent as X-Project-Id');
  if (env.project) project.default(env.project, 'SERVICE_PROJECT');
  return cmd
    .addOption(new Option('--url <url>', 'service base URL (SERVICE_URL)').default(env.url))
    .addOption(apiKey)
    .addOption(project)
    .addOption(new Option('--timeout <seconds>', 'per-request timeout in seconds').default(60).argParser(positiveNumber))
    .addOption(new Option('--retry-wait <seconds>', 'longest total wait per request when the service says "retry later" (429/503); 0 never waits')
      .default(120).argParser(nonNegativeNumber))
    .option('--json', 'print JSON (the default when stdout is not a terminal); errors on stderr become JSON too')
    .addOption(formatOption())
    // Read by main() before parsing (it sets the defaults above); accepted here after the command too.
    .option('--env-file <file>', 'read SERVICE_URL, SERVICE_API_KEY, SERVICE_PROJECT from a dotenv file');
}

/** `--format table|json`: what stdout carries, whether or not it is a terminal. */
export function formatOption(): Option {
  return new Option('--format <format>', 'table or json, whether or not stdout is a terminal').choices(['table', 'json']);
}

/**
 * Runs `work` with a client and the output helper, closing the client's connections after.
 * `beforeWait` is told before each wait the server asks for (a command may explain it once).
 */
export async function withClient<T>(
  opts: ClientOptionValues,
  cmd: Command,
  work: (client: ServiceClient, out: Output) => Promise<T>,
  hooks: { beforeWait?: (wait: RetryWait) => void } = {},
): Promise<T> {
  const io = ioOf(cmd);
  const out = createOutput(io, { json: opts.json, format: opts.format });
  const client = new ServiceClient({
    url: opts.url,
    apiKey: opts.apiKey ?? null,
    project: opts.project ?? null,
    timeoutMs: Math.round(opts.timeout * 1000),
    userAgent: `service-cli/${cliVersion()}`,
    // The CLI renders only fields it knows and starts once per call: no zod on the hot paths.
    responseCheck: 'shape',
    retry: {
      maxWaitMs: Math.round(opts.retryWait * 1000),
      wait: (w) => {
        hooks.beforeWait?.(w);
        return out.pause(
          `${w.status === 429 ? 'rate limited' : 'service unavailable'} (HTTP ${w.status}): waiting ${formatSeconds(w.seconds)} before retry ${w.attempt} of ${w.method} ${w.path}`,
          w.seconds * 1000,
        );
      },
    },
  });
  try {
    return await work(client, out);
  } finally {
    await client.close();
  }
}

/** Commander argument parsers: a bad value is a usage error (exit 2) before any request. */
export function positiveNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number');
  return n;
}

export function nonNegativeNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number of at least 0');
  return n;
}

function formatSeconds(s: number): string {
  return s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}

export function finiteNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('expected a number');
  return n;
}

export function wholeNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n)) throw new InvalidArgumentError('expected a whole number');
  return n;
}

/** A number within [min, max] (`--min-score 11` is refused before any request). */
export function numberIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = finiteNumber(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected a number from ${min} to ${max}`);
    return n;
  };
}

/** A whole number within [min, max]; for flags whose bounds are not the server's to check. */
export function integerIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = wholeNumber(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    return n;
  };
}
