/**
 * Readers of one environment variable each. A bad value throws ConfigError naming the
 * variable, and startup stops with that message.
 */
export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

/** The trimmed value; unset and blank are both null. */
export function str(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v.trim();
}

export function bool(env: Env, name: string, dflt: boolean): boolean {
  const v = str(env, name);
  if (v === null) return dflt;
  const l = v.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(l)) return true;
  if (['false', '0', 'no', 'off'].includes(l)) return false;
  throw new ConfigError(name, `expected true or false, got "${v}"`);
}

export function num(env: Env, name: string, dflt: number, opts: { min?: number; max?: number; int?: boolean } = {}): number {
  const v = str(env, name);
  if (v === null) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new ConfigError(name, `expected a number, got "${v}"`);
  if (opts.int && !Number.isInteger(n)) throw new ConfigError(name, `expected a whole number, got "${v}"`);
  if (opts.min !== undefined && n < opts.min) throw new ConfigError(name, `must be at least ${opts.min}, got ${n}`);
  if (opts.max !== undefined && n > opts.max) throw new ConfigError(name, `must be at most ${opts.max}, got ${n}`);
  return n;
}

/** A number variable with no default: null when unset. */
export function optionalNum(env: Env, name: string, opts: { min?: number; max?: number } = {}): number | null {
  return str(env, name) === null ? null : num(env, name, 0, opts);
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], dflt: T): T {
  const v = str(env, name);
  if (v === null) return dflt;
  if (!(allowed as readonly string[]).includes(v)) {
    throw new ConfigError(name, `expected one of ${allowed.join(', ')}, got "${v}"`);
  }
  return v as T;
}

/** A comma-separated list; empty when unset. */
export function list(env: Env, name: string): string[] {
  const v = str(env, name);
  return v === null ? [] : v.split(',').map((s) => s.trim()).filter(Boolean);
}

export function url(env: Env, name: string): string | null {
  const v = str(env, name);
  if (v === null) return null;
  // Plain URL parsing: the client commands read these readers too, and must not pay for zod.
  if (!URL.canParse(v)) throw new ConfigError(name, `expected a URL, got "${v}"`);
  return v;
}
