/**
 * Liveness and readiness probes in DB auth mode (a key is required everywhere else): they
 * answer without a key, write no audit event, are not rate limited, say nothing but up/ready,
 * and readiness answers 503 once PostgreSQL cannot be reached (connections go through a TCP
 * proxy that is then shut). The Dockerfile HEALTHCHECK and compose.yaml probe readiness.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { perFileDatabase, startDbServer, type DbServer } from './db-auth-helpers.js';

const hasPg = await requirePostgres('liveness and readiness probes');
const database = perFileDatabase('probes');
const ROOT = join(import.meta.dirname, '..', '..');

describe.skipIf(!hasPg)('liveness and readiness probes (DB auth mode)', () => {
  let t: DbServer;
  let proxy: TcpProxy;

  beforeAll(async () => {
    const url = new URL((await database.schema()).url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    // A budget of 2 requests a minute per IP: probes beyond it must still answer.
    t = await startDbServer(proxy.url(url.toString()), { SERVICE_RATE_LIMIT_DEFAULT: '2' });
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await database.drop();
  });

  it('/v1/health still requires a key', async () => {
    expect((await t.call('GET', '/v1/health')).statusCode).toBe(401);
  });

  it('answer without a key, beyond the rate limit, with no audit event and nothing but up/ready', async () => {
    const before = await t.app.deps.storage.audit.list({ limit: 1000 });
    for (let i = 0; i < 5; i++) {
      const live = await t.call('GET', '/livez');
      expect(live.statusCode).toBe(200);
      expect(live.json()).toEqual({ status: 'up' });
      const ready = await t.call('GET', '/readyz');
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ready' });
    }
    expect(await t.app.deps.storage.audit.list({ limit: 1000 })).toEqual(before);
  });

  it('are declared in the OpenAPI document without security', async () => {
    const doc = (await t.call('GET', '/v1/openapi.json')).json() as { paths: Record<string, { get?: { security?: unknown[] } }> };
    for (const path of ['/livez', '/readyz']) {
      expect(doc.paths[path]?.get, path).toBeDefined();
      expect(doc.paths[path].get!.security).toEqual([]);
    }
  });

  it('the Dockerfile HEALTHCHECK and compose.yaml probe /readyz, not the keyed /v1/health', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const healthcheck = dockerfile.slice(dockerfile.indexOf('\nHEALTHCHECK ') + 1);
    expect(healthcheck.split('\n').slice(0, 2).join('\n')).toContain("/readyz'");
    expect(dockerfile).not.toContain('/v1/health');
    const compose = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
    const service = compose.slice(compose.indexOf('\n  service:'));
    expect(service).toMatch(/healthcheck:\n\s+test: \[.*\/readyz.*\]/);
  });

  it('readiness answers 503 not_ready when storage cannot be reached; liveness stays up', async () => {
    await proxy.close();
    const ready = await t.call('GET', '/readyz');
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'not_ready' });
    expect((await t.call('GET', '/livez')).json()).toEqual({ status: 'up' });
  });
});
