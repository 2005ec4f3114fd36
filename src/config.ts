import { BUNDLED_MODEL_ID } from './core/embedding-model.js';
import { ROLES, type Role } from './core/types.js';

/**
 * The only reader of the environment. Every SERVICE_* variable of the spec (plus ours,
 * marked (+)) is parsed once into a frozen Config; a bad value throws ConfigError naming the
 * variable, and startup stops with that message.
 */
export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

const LOCAL_ENVIRONMENTS = ['local', 'development', 'dev', 'test'];

export type LlmProvider = 'openai' | 'anthropic' | 'none';
export type AuthMode = 'auto' | 'env' | 'db' | 'dev' | 'oidc';

export interface Config {
  storage: 'json' | 'postgres';
  dataPath: string;
  databaseUrl: string | null;
  /**
   * waitSeconds (+, SERVICE_DB_WAIT_SECONDS): null (unset) starts at once even when PostgreSQL
   * is down, answering 503 until it appears; a number waits at most that long for it at
   * startup and then fails (0: fail at once).
   */
  db: { poolMax: number; statementTimeoutMs: number; connectTimeoutMs: number; waitSeconds: number | null };
  llm: {
    provider: LlmProvider;
    /** Model id; a per-provider default when unset. */
    model: string;
    apiKey: string | null;
    baseUrl: string | null;
    timeoutSeconds: number;
    concurrency: number;
  };
  embedding: {
    /** True when local embeddings are used (SERVICE_LOCAL_EMBEDDINGS or no provider key). */
    local: boolean;
    /** Why local was chosen (logged at startup). */
    localReason: string | null;
    hostedModel: string;
    hostedApiKey: string | null;
    /** (+) `use-lite-static` (the bundled static model, default) or a hub model id. */
    localModel: string;
    /** (+) Model folder, model2vec or transformers.js layout (loaded offline); set ⇒ local embeddings. */
    localModelPath: string | null;
    /** Hub base URL for model downloads (HF_ENDPOINT, for mirrors). */
    hubEndpoint: string;
  };
  /**
   * SERVICE_TIER_DUPLICATE / SERVICE_TIER_ADAPT when set, else null: the thresholds in force
   * are resolved at startup (env → model folder → built-in → spec; see adapters/embeddings/model-tiers.ts).
   */
  tiers: { duplicate: number | null; adapt: number | null };
  /** (+) Verified reuse: SERVICE_RECALL_VERIFY (recall's default for `verify`), SERVICE_RECALL_VERIFY_MAX. */
  recallVerify: { enabled: boolean; max: number };
  /** (+) Cosine at which analyze-failures joins two issues; model-dependent like the tiers. */
  failureClusterThreshold: number;
  auth: {
    mode: AuthMode;
    apiKeys: string[];
    allowNoAuth: boolean;
    environment: string | null;
    envRole: Role;
    bootstrapToken: string | null;
    oidc: {
      issuer: string | null;
      audience: string | null;
      jwksUrl: string | null;
      roleClaim: string;
      tenantClaim: string;
      projectClaim: string;
    };
  };
  corsOrigins: string[];
  rateLimit: { default: number; expensive: number; perKey: number; windowSeconds: number };
  trustedProxies: string[];
  maxBodySize: number;
  redaction: boolean;
  maintenance: boolean;
  jsonLogs: boolean;
  logLevel: string;
  telemetry: { enabled: boolean; endpoint: string };
  metrics: { enabled: boolean; token: string | null };
  /** (+) POST /mcp (MCP over Streamable HTTP), off unless SERVICE_MCP=true. */
  mcp: { enabled: boolean };
  /** (+) The web console at /console (static files built into dist/console), on unless SERVICE_CONSOLE=false. */
  console: { enabled: boolean };
  payment: PaymentConfig;
  /** staleSeconds (+): a running job without a heartbeat for this long was left by a dead worker. */
  jobs: { pollIntervalSeconds: number; maxConcurrent: number; staleSeconds: number };
  /**
   * server.timeouts (+): bounds on slow clients (issue 18, 8), in milliseconds: a whole request
   * (SERVICE_REQUEST_TIMEOUT_SECONDS), its headers (SERVICE_HEADERS_TIMEOUT_SECONDS), and an
   * idle keep-alive connection (SERVICE_KEEP_ALIVE_TIMEOUT_SECONDS).
   */
  server: { host: string; port: number; timeouts: { requestMs: number; headersMs: number; keepAliveMs: number } };
}

/** Billing (hosted): off without PAYMENT_SECRET_KEY. */
export interface PaymentConfig {
  secretKey: string | null;
  webhookSecret: string | null;
  /** (+) PAYMENT_API_BASE_URL: where the processor's API is (tests point it at a fake on loopback). */
  apiBaseUrl: string | null;
  /** (+) PAYMENT_PRICE_<PLAN>_<MONTHLY|YEARLY>: the processor's price ids, each mapped to a plan. */
  prices: Record<string, { plan: 'pro' | 'team' | 'enterprise'; interval: 'month' | 'year' }>;
}

const PRICE_VARIABLES = [
  ['PAYMENT_PRICE_PRO_MONTHLY', 'pro', 'month'], ['PAYMENT_PRICE_PRO_YEARLY', 'pro', 'year'],
  ['PAYMENT_PRICE_TEAM_MONTHLY', 'team', 'month'], ['PAYMENT_PRICE_TEAM_YEARLY', 'team', 'year'],
  ['PAYMENT_PRICE_ENTERPRISE_MONTHLY', 'enterprise', 'month'], ['PAYMENT_PRICE_ENTERPRISE_YEARLY', 'enterprise', 'year'],
] as const;

function paymentConfig(env: Env): PaymentConfig {
  const prices: PaymentConfig['prices'] = {};
  for (const [name, plan, interval] of PRICE_VARIABLES) {
    const id = str(env, name);
    if (id !== null) prices[id] = { plan, interval };
  }
  return {
    secretKey: str(env, 'PAYMENT_SECRET_KEY'),
    webhookSecret: str(env, 'PAYMENT_WEBHOOK_SECRET'),
    apiBaseUrl: url(env, 'PAYMENT_API_BASE_URL'),
    prices,
  };
}

const DEFAULT_MODELS: Record<Exclude<LlmProvider, 'none'>, string> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-3-5-haiku-latest',
};

function str(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v.trim();
}

function bool(env: Env, name: string, dflt: boolean): boolean {
  const v = str(env, name);
  if (v === null) return dflt;
  const l = v.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(l)) return true;
  if (['false', '0', 'no', 'off'].includes(l)) return false;
  throw new ConfigError(name, `expected true or false, got "${v}"`);
}

function num(env: Env, name: string, dflt: number, opts: { min?: number; max?: number; int?: boolean } = {}): number {
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
function optionalNum(env: Env, name: string, opts: { min?: number; max?: number } = {}): number | null {
  return str(env, name) === null ? null : num(env, name, 0, opts);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], dflt: T): T {
  const v = str(env, name);
  if (v === null) return dflt;
  if (!(allowed as readonly string[]).includes(v)) {
    throw new ConfigError(name, `expected one of ${allowed.join(', ')}, got "${v}"`);
  }
  return v as T;
}

function list(env: Env, name: string): string[] {
  const v = str(env, name);
  return v === null ? [] : v.split(',').map((s) => s.trim()).filter(Boolean);
}

function url(env: Env, name: string): string | null {
  const v = str(env, name);
  if (v === null) return null;
  // Plain URL parsing: the client commands read this file too, and must not pay for zod.
  if (!URL.canParse(v)) throw new ConfigError(name, `expected a URL, got "${v}"`);
  return v;
}

function parseLlmProvider(env: Env): LlmProvider {
  const raw = oneOf(env, 'SERVICE_LLM_PROVIDER', ['provider_a', 'provider_b', 'none', 'openai', 'anthropic'] as const, 'provider_a');
  if (raw === 'provider_a') return 'openai';
  if (raw === 'provider_b') return 'anthropic';
  return raw;
}

/** Parses the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const storage = oneOf(env, 'SERVICE_STORAGE', ['json', 'postgres'] as const, 'json');
  const databaseUrl = str(env, 'SERVICE_DATABASE_URL');
  if (storage === 'postgres' && !databaseUrl) {
    throw new ConfigError('SERVICE_DATABASE_URL', 'required when SERVICE_STORAGE=postgres');
  }

  const provider = parseLlmProvider(env);
  const openaiKey = str(env, 'LLM_PROVIDER_A_API_KEY') ?? str(env, 'OPENAI_API_KEY');
  const anthropicKey = str(env, 'LLM_PROVIDER_B_API_KEY') ?? str(env, 'ANTHROPIC_API_KEY');
  const llmKey = provider === 'openai' ? openaiKey : provider === 'anthropic' ? anthropicKey : null;
  const llmBaseUrl = url(env, 'SERVICE_LLM_BASE_URL');

  const localFlag = str(env, 'SERVICE_LOCAL_EMBEDDINGS') !== null;
  const localModelPath = str(env, 'SERVICE_EMBEDDING_MODEL_PATH');
  // Hosted embeddings speak the OpenAI embeddings API (provider A's key). A model folder is an
  // explicit choice of local embeddings: a provider key alone must not override it.
  const local = localFlag || localModelPath !== null || !openaiKey;
  const localReason = localFlag ? 'SERVICE_LOCAL_EMBEDDINGS is set'
    : localModelPath !== null ? 'SERVICE_EMBEDDING_MODEL_PATH is set'
    : !openaiKey ? 'no LLM_PROVIDER_A_API_KEY for hosted embeddings' : null;

  const duplicate = optionalNum(env, 'SERVICE_TIER_DUPLICATE', { min: 0, max: 1 });
  const adapt = optionalNum(env, 'SERVICE_TIER_ADAPT', { min: 0, max: 1 });
  if (adapt !== null && duplicate !== null && adapt > duplicate) throw new ConfigError('SERVICE_TIER_ADAPT', `must not exceed SERVICE_TIER_DUPLICATE (${duplicate})`);

  const authMode = oneOf(env, 'SERVICE_AUTH_MODE', ['auto', 'env', 'db', 'dev', 'oidc'] as const, 'auto');
  const bootstrapToken = str(env, 'SERVICE_BOOTSTRAP_TOKEN');
  if (bootstrapToken !== null && bootstrapToken.length < 32) {
    throw new ConfigError('SERVICE_BOOTSTRAP_TOKEN', 'must be at least 32 characters');
  }
  const environment = str(env, 'SERVICE_ENVIRONMENT');

  const config: Config = {
    storage,
    dataPath: str(env, 'SERVICE_DATA_PATH') ?? './service_data',
    databaseUrl,
    db: {
      poolMax: num(env, 'SERVICE_DB_POOL_MAX', 10, { min: 1, max: 1000, int: true }),
      statementTimeoutMs: num(env, 'SERVICE_DB_STATEMENT_TIMEOUT_MS', 15000, { min: 0, int: true }),
      connectTimeoutMs: num(env, 'SERVICE_DB_CONNECT_TIMEOUT_MS', 5000, { min: 0, int: true }),
      waitSeconds: str(env, 'SERVICE_DB_WAIT_SECONDS') === null ? null : num(env, 'SERVICE_DB_WAIT_SECONDS', 0, { min: 0, max: 86_400 }),
    },
    llm: {
      provider,
      model: str(env, 'SERVICE_LLM_MODEL') ?? (provider === 'none' ? 'none' : DEFAULT_MODELS[provider]),
      apiKey: llmKey,
      baseUrl: llmBaseUrl,
      timeoutSeconds: num(env, 'SERVICE_LLM_TIMEOUT', 30, { min: 0.1, max: 3600 }),
      concurrency: num(env, 'SERVICE_LLM_CONCURRENCY', 10, { min: 1, max: 1000, int: true }),
    },
    embedding: {
      local,
      localReason,
      hostedModel: str(env, 'SERVICE_EMBEDDING_MODEL') ?? 'text-embedding-3-small',
      hostedApiKey: openaiKey,
      localModel: str(env, 'SERVICE_LOCAL_EMBEDDING_MODEL') ?? BUNDLED_MODEL_ID,
      localModelPath,
      hubEndpoint: url(env, 'HF_ENDPOINT') ?? 'https://huggingface.co',
    },
    tiers: { duplicate, adapt },
    recallVerify: {
      enabled: bool(env, 'SERVICE_RECALL_VERIFY', false),
      max: num(env, 'SERVICE_RECALL_VERIFY_MAX', 5, { min: 1, max: 50, int: true }),
    },
    failureClusterThreshold: num(env, 'SERVICE_FAILURE_CLUSTER_THRESHOLD', 0.8, { min: 0, max: 1 }),
    auth: {
      mode: authMode,
      apiKeys: list(env, 'SERVICE_API_KEYS'),
      allowNoAuth: bool(env, 'SERVICE_ALLOW_NO_AUTH', false),
      environment,
      envRole: oneOf(env, 'SERVICE_ENV_AUTH_ROLE', ROLES, 'owner'),
      bootstrapToken,
      oidc: {
        issuer: url(env, 'SERVICE_OIDC_ISSUER'),
        audience: str(env, 'SERVICE_OIDC_AUDIENCE'),
        jwksUrl: url(env, 'SERVICE_OIDC_JWKS_URL'),
        roleClaim: str(env, 'SERVICE_OIDC_ROLE_CLAIM') ?? 'role',
        tenantClaim: str(env, 'SERVICE_OIDC_TENANT_CLAIM') ?? 'tenant_id',
        projectClaim: str(env, 'SERVICE_OIDC_PROJECT_CLAIM') ?? 'project_id',
      },
    },
    corsOrigins: list(env, 'SERVICE_CORS_ORIGINS'),
    rateLimit: {
      default: num(env, 'SERVICE_RATE_LIMIT_DEFAULT', 60, { min: 1, int: true }),
      expensive: num(env, 'SERVICE_RATE_LIMIT_EXPENSIVE', 10, { min: 1, int: true }),
      perKey: num(env, 'SERVICE_RATE_LIMIT_PER_KEY', 120, { min: 1, int: true }),
      // (+) Length of the fixed window the three limits count in; short ones are for tests.
      windowSeconds: num(env, 'SERVICE_RATE_LIMIT_WINDOW_SECONDS', 60, { min: 1, int: true }),
    },
    // No proxy is trusted unless the operator names it (issue 18, 9): trusting private ranges
    // let any peer on the network rotate X-Forwarded-For past the per-IP limit.
    trustedProxies: list(env, 'SERVICE_TRUSTED_PROXIES'),
    maxBodySize: num(env, 'SERVICE_MAX_BODY_SIZE', 1_048_576, { min: 1024, int: true }),
    redaction: bool(env, 'SERVICE_REDACTION', true),
    maintenance: bool(env, 'SERVICE_MAINTENANCE', false),
    jsonLogs: bool(env, 'SERVICE_JSON_LOGS', false),
    logLevel: oneOf(env, 'SERVICE_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    telemetry: {
      enabled: bool(env, 'SERVICE_TELEMETRY', false),
      endpoint: url(env, 'SERVICE_OTEL_ENDPOINT') ?? 'http://localhost:4317',
    },
    metrics: { enabled: bool(env, 'SERVICE_METRICS', false), token: str(env, 'SERVICE_METRICS_TOKEN') },
    mcp: { enabled: bool(env, 'SERVICE_MCP', false) },
    console: { enabled: bool(env, 'SERVICE_CONSOLE', true) },
    payment: paymentConfig(env),
    jobs: {
      pollIntervalSeconds: num(env, 'SERVICE_JOB_POLL_INTERVAL', 2.0, { min: 0.05, max: 3600 }),
      maxConcurrent: num(env, 'SERVICE_JOB_MAX_CONCURRENT', 3, { min: 1, max: 100, int: true }),
      staleSeconds: num(env, 'SERVICE_JOB_STALE_SECONDS', 60, { min: 1, max: 86_400 }),
    },
    server: {
      host: str(env, 'SERVICE_HOST') ?? '127.0.0.1',
      port: num(env, 'SERVICE_PORT', 8000, { min: 0, max: 65535, int: true }),
      timeouts: {
        requestMs: 1000 * num(env, 'SERVICE_REQUEST_TIMEOUT_SECONDS', 120, { min: 1, max: 3600 }),
        headersMs: 1000 * num(env, 'SERVICE_HEADERS_TIMEOUT_SECONDS', 10, { min: 1, max: 600 }),
        keepAliveMs: 1000 * num(env, 'SERVICE_KEEP_ALIVE_TIMEOUT_SECONDS', 5, { min: 1, max: 600 }),
      },
    },
  };

  resolveAuthMode(config);
  return deepFreeze(config);
}

/** Dev mode (explicit, or auto without keys or a database) is only allowed locally. */
function resolveAuthMode(config: Config): void {
  const { auth } = config;
  const local = auth.environment === null || LOCAL_ENVIRONMENTS.includes(auth.environment.toLowerCase());
  if (auth.mode === 'dev') {
    if (!auth.allowNoAuth) throw new ConfigError('SERVICE_AUTH_MODE', 'dev mode needs SERVICE_ALLOW_NO_AUTH=true');
    if (!local) throw new ConfigError('SERVICE_AUTH_MODE', `dev mode is blocked in environment "${auth.environment}"`);
  }
  if (auth.mode === 'env' && auth.apiKeys.length === 0) {
    throw new ConfigError('SERVICE_API_KEYS', 'env auth mode needs at least one key');
  }
  if (auth.mode === 'db' && !config.databaseUrl) {
    throw new ConfigError('SERVICE_AUTH_MODE', 'db auth mode needs SERVICE_DATABASE_URL');
  }
  if (auth.mode === 'oidc' && !auth.oidc.issuer) {
    throw new ConfigError('SERVICE_OIDC_ISSUER', 'required when SERVICE_AUTH_MODE=oidc');
  }
  if (auth.mode === 'auto' && !config.databaseUrl && auth.apiKeys.length === 0 && !local) {
    throw new ConfigError('SERVICE_AUTH_MODE', `no API keys and no database in environment "${auth.environment}": refusing to run unauthenticated`);
  }
}

/** The auth mode `auto` resolves to. */
export function effectiveAuthMode(config: Config): Exclude<AuthMode, 'auto'> {
  const { mode } = config.auth;
  if (mode !== 'auto') return mode;
  if (config.databaseUrl) return 'db';
  if (config.auth.apiKeys.length > 0) return 'env';
  return 'dev';
}

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
    noColor: env.NO_COLOR !== undefined && env.NO_COLOR !== '',
    ci: str(env, 'CI') !== null && env.CI !== 'false',
    stepSummary: str(env, 'GITHUB_STEP_SUMMARY'),
  };
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
