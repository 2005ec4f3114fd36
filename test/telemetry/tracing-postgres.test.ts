import { afterAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../server/app.js';
import { createApp } from '../../src/app.js';
import { testConfig } from '../api/helpers.js';
import { tempDir } from '../support/env.js';
import { createMigratedSchema, createTestDatabase, requirePostgres } from '../support/pg.js';
import { startOtlpReceiver } from './otlp-receiver.js';

const hasPg = await requirePostgres('tracing on PostgreSQL');
const receiver = await startOtlpReceiver();
afterAll(() => receiver.close());

describe.skipIf(!hasPg)('tracing on PostgreSQL', () => {
  it('storage spans carry the pg instrumentation\'s query spans', async () => {
    const db = await createTestDatabase('tracing');
    const schema = await createMigratedSchema(db, 'tracing');
    const data = await tempDir('svc-pg-tracing-');
    const app = await createApp(testConfig(data.path, {
      SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url, SERVICE_TELEMETRY: 'true', SERVICE_OTEL_ENDPOINT: receiver.url,
    }));
    const server = await buildServer(app);
    try {
      const res = await server.inject({
        method: 'POST', url: '/v1/recall', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ task: 'rotate the logs' }),
      });
      expect(res.statusCode).toBe(200);
    } finally {
      await server.close();
      await app.close();
      await data.remove();
      await db.drop();
    }
    const spans = receiver.spans;
    const request = spans.find((s) => s.name === 'POST /v1/recall');
    expect(request, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    const storage = spans.filter((s) => s.parentSpanId === request!.spanId && s.name.startsWith('storage '));
    expect(storage.length).toBeGreaterThan(0);
    const queries = spans.filter((s) => storage.some((st) => st.spanId === s.parentSpanId) && s.name.startsWith('pg.query'));
    // Background polling (the job queue) makes no root spans of its own.
    expect(spans.filter((s) => !s.parentSpanId && !s.name.startsWith('POST ')).map((s) => s.name)).toEqual([]);
    expect(queries.length, JSON.stringify(spans.map((s) => s.name))).toBeGreaterThan(0);
  });
});
