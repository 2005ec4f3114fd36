import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, formatLine } from '../../src/adapters/logging/logger.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import type { Embedder } from '../../src/ports/embedder.js';
import { newId } from '../../src/services/ids.js';
import { MODEL_PATH } from './helpers.js';

const dirs: string[] = [];
afterEach(async () => {
  while (dirs.length) await rm(dirs.pop() as string, { recursive: true, force: true });
});

async function tempConfig() {
  const dir = await mkdtemp(join(tmpdir(), 'svc-app-'));
  dirs.push(dir);
  return loadConfig({
    SERVICE_DATA_PATH: dir, SERVICE_LOCAL_EMBEDDINGS: '1', SERVICE_EMBEDDING_MODEL_PATH: MODEL_PATH,
    SERVICE_LLM_PROVIDER: 'none', SERVICE_LOG_LEVEL: 'silent',
  });
}

/** A tiny deterministic embedder standing in for "another model". */
const otherModel: Embedder = {
  info: { provider: 'local', model: 'tiny-4d', dimension: 4 },
  embed: async (texts) => texts.map((t) => {
    const v = new Float32Array([t.length, 1, 2, 3]);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  }),
};

describe('createApp', () => {
  it('records the embedding model of an empty store and refuses a different one, naming `service reindex`', async () => {
    const config = await tempConfig();
    const first = await createApp(config, { embedder: otherModel });
    expect(await first.deps.storage.meta.getEmbeddingInfo()).toEqual(otherModel.info);
    await first.close();

    const err = await createApp(config).then(async (app) => { await app.close(); return null; }, (e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err?.message).toContain('tiny-4d (4 dimensions)');
    expect(err?.message).toContain('use-lite-static (384 dimensions)');
    expect(err?.message).toContain('service reindex');
    expect(err?.message).toContain('SERVICE_LOCAL_EMBEDDINGS');

    // The failed start released the store: reindex (which allows the mismatch) can open it.
    const repair = await createApp(config, {}, { allowEmbeddingMismatch: true });
    expect(repair.deps.embedder.info.dimension).toBe(384);
    await repair.close();
  });

  it('wires the configured storage, embedder and no LLM for provider none', async () => {
    const app = await createApp(await tempConfig());
    expect(app.deps.storage.kind).toBe('json');
    expect(app.deps.llm).toBeNull();
    expect(app.deps.embedder.info).toMatchObject({ provider: 'local', model: 'use-lite-static', dimension: 384 });
    await app.close();
    await app.close();
  });
});

describe('logger', () => {
  it('never writes Authorization headers, api keys or secrets', () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', json: true, destination: { write: (l: string) => lines.push(l) } });
    log.info({ req: { headers: { authorization: 'Bearer svc_live_secret' } }, api_key: 'sk-live-1', nested: { client_secret: 'shh', ok: 'visible' } }, 'hello');
    const text = lines.join('');
    expect(text).not.toMatch(/svc_live_secret|sk-live-1|shh/);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'info', msg: 'hello', nested: { ok: 'visible', client_secret: '[REDACTED]' } });
  });

  it('formats readable lines when JSON logs are off', () => {
    const line = formatLine(JSON.stringify({ level: 'warn', time: '2025-01-01T00:00:00.000Z', msg: 'slow query', ms: 120, table: 'patterns x' }));
    expect(line).toBe('2025-01-01T00:00:00.000Z WARN  slow query ms=120 table="patterns x"\n');
  });

  it('human log lines print numbers without float noise (the JSON lines keep them exact)', () => {
    const line = formatLine(JSON.stringify({ level: 'info', time: '2025-01-01T00:00:00.000Z', msg: 'scored', score: 0.9550000000000001, parts: { median: 0.15000000000000002 } }));
    expect(line).toBe('2025-01-01T00:00:00.000Z INFO  scored score=0.955 parts={"median":0.15}\n');
  });
});

describe('ids', () => {
  it('are path-safe, unique and sort in creation order, even within one millisecond', () => {
    const at = new Date('2025-06-01T12:00:00Z');
    const ids = Array.from({ length: 500 }, (_, i) => newId(i < 250 ? at : new Date(at.getTime() + 1)));
    expect(new Set(ids).size).toBe(500);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^[0-9a-z]{18}$/);
    // A later time always sorts later, and a clock stepping back does not break the order.
    const later = newId(new Date('2030-01-01T00:00:00Z'));
    const stepBack = newId(new Date('2020-01-01T00:00:00Z'));
    expect(later > ids[ids.length - 1]).toBe(true);
    expect(stepBack > later).toBe(true);
  });
});

describe('request logs', () => {
  async function logsOf(level: string, requestId: string): Promise<Record<string, unknown>[]> {
    const { startServer } = await import('./helpers.js');
    const lines: string[] = [];
    const logger = createLogger({ level, json: true, destination: { write: (l: string) => lines.push(l) } });
    const t = await startServer({}, { logger });
    try {
      await t.call('GET', '/v1/recall?task=email%20alice%40example.com', undefined, { 'x-request-id': requestId });
    } finally {
      await t.close();
    }
    expect(lines.join('')).not.toContain('alice');
    return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.reqId === requestId);
  }

  it('write one line per request at info: method, path (never the query string: GET recall carries the task), status, time', async () => {
    const entries = await logsOf('info', 'req-log-1');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      level: 'info', msg: 'request completed', reqId: 'req-log-1',
      req: { method: 'GET', url: '/v1/recall' }, res: { statusCode: 200 },
    });
    expect(typeof entries[0].responseTime).toBe('number');
  });

  it('add the incoming-request line at debug only', async () => {
    const entries = await logsOf('debug', 'req-log-2');
    expect(entries.map((e) => e.msg)).toEqual(['incoming request', 'request completed']);
    expect(entries[0]).toMatchObject({ level: 'debug', req: { method: 'GET', url: '/v1/recall' } });
  });
});
