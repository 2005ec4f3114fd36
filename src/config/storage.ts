import { ConfigError, num, oneOf, optionalNum, str, type Env } from './env-readers.js';

/** Where memories are kept: a JSON folder, or PostgreSQL and its connection pool. */
export interface StorageSettings {
  /** SERVICE_STORAGE. */
  kind: 'json' | 'postgres';
  dataPath: string;
  databaseUrl: string | null;
  /**
   * waitSeconds (+, SERVICE_DB_WAIT_SECONDS): null (unset) starts at once even when PostgreSQL
   * is down, answering 503 until it appears; a number waits at most that long for it at
   * startup and then fails (0: fail at once).
   */
  db: { poolMax: number; statementTimeoutMs: number; connectTimeoutMs: number; waitSeconds: number | null };
  /**
   * (+) PostgreSQL's recall bookkeeping queue (docs/behavior.md "Recall bookkeeping"):
   * SERVICE_DB_RECALL_BATCH records per batch (also the most a crash can lose),
   * SERVICE_DB_RECALL_FLUSH_MS the longest a record waits for its batch.
   */
  recallBookkeeping: { batchMax: number; flushMs: number };
}

export function storageSettings(env: Env): StorageSettings {
  const storage = oneOf(env, 'SERVICE_STORAGE', ['json', 'postgres'] as const, 'json');
  const databaseUrl = str(env, 'SERVICE_DATABASE_URL');
  if (storage === 'postgres' && !databaseUrl) {
    throw new ConfigError('SERVICE_DATABASE_URL', 'required when SERVICE_STORAGE=postgres');
  }
  return {
    kind: storage,
    dataPath: str(env, 'SERVICE_DATA_PATH') ?? './service_data',
    databaseUrl,
    db: {
      poolMax: num(env, 'SERVICE_DB_POOL_MAX', 10, { min: 1, max: 1000, int: true }),
      statementTimeoutMs: num(env, 'SERVICE_DB_STATEMENT_TIMEOUT_MS', 15000, { min: 0, int: true }),
      connectTimeoutMs: num(env, 'SERVICE_DB_CONNECT_TIMEOUT_MS', 5000, { min: 0, int: true }),
      waitSeconds: optionalNum(env, 'SERVICE_DB_WAIT_SECONDS', { min: 0, max: 86_400 }),
    },
    recallBookkeeping: {
      batchMax: num(env, 'SERVICE_DB_RECALL_BATCH', 256, { min: 1, max: 10_000, int: true }),
      flushMs: num(env, 'SERVICE_DB_RECALL_FLUSH_MS', 5, { min: 0, max: 60_000, int: true }),
    },
  };
}
