import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJsonStorage } from '../src/adapters/storage/json/index.js';
import { openPostgresStorage } from './postgres.js';
import type { Storage } from '../src/ports/storage.js';

/**
 * One function per storage backend the benchmark can run against. Each opens a fresh, empty
 * store of its own and returns how to measure and remove it afterwards.
 * (PostgreSQL: bench/postgres.ts, a database of its own per size,
 * dropped in `remove`.)
 */
export interface BenchStorage {
  storage: Storage;
  /** Shown in the report header, e.g. "json (temp dir /tmp/…)". */
  label: string;
  /** SERVICE_* variables that point `service serve` at this store (the HTTP benchmark). */
  serverEnv: Record<string, string>;
  /**
   * (optional) Runs a bulk fill the fastest way the store allows, handing `fill` the storage
   * to write to (PostgreSQL: asynchronous commits and the vector indexes built afterwards).
   */
  bulkLoad?(fill: (storage: Storage) => Promise<void>): Promise<void>;
  /** Bytes the store occupies (null when the backend cannot tell); call after close. */
  sizeBytes(): Promise<number | null>;
  /** Flushes and releases the store. */
  close(): Promise<void>;
  /** Deletes everything the store created (after close; also after a failed run). */
  remove(): Promise<void>;
}

export type StorageFactory = () => Promise<BenchStorage>;

export const STORAGE_FACTORIES: Record<string, StorageFactory> = {
  json: openJsonStorage,
  postgres: openPostgresStorage,
};

async function openJsonStorage(): Promise<BenchStorage> {
  const dataPath = await mkdtemp(join(tmpdir(), 'service-bench-json-'));
  try {
    const storage = await createJsonStorage({ dataPath });
    return {
      storage,
      label: `json (temp dir ${dataPath}, removed after)`,
      serverEnv: { SERVICE_STORAGE: 'json', SERVICE_DATA_PATH: dataPath },
      sizeBytes: () => directorySize(dataPath),
      close: () => storage.close(),
      remove: () => rm(dataPath, { recursive: true, force: true }),
    };
  } catch (err) {
    await rm(dataPath, { recursive: true, force: true });
    throw err;
  }
}

async function directorySize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) total += await directorySize(full);
    else if (entry.isFile()) total += (await stat(full)).size;
  }
  return total;
}
