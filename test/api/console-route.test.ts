/**
 * GET /console (+): the console's static files with a strict CSP, path-safe asset names, the
 * SERVICE_CONSOLE switch, and the build's size budget. (The screens themselves: test/console.)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, SCRIPT_BUDGET_GZIP_BYTES, type ConsoleBuild } from '../../scripts/build-console.mjs';
import { installErrorHandling } from '../../server/plugins/errors.js';
import { CONSOLE_CSP, consoleRoutes } from '../../server/routes/console.js';
import { registeredRoutes } from '../../server/route-registry.js';
import { serversClosedAfterEach } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const startServer = serversClosedAfterEach();

async function consoleServer(directory: string): Promise<FastifyInstance> {
  const app = Fastify();
  installErrorHandling(app, 1024);
  consoleRoutes(app, { enabled: true, directory });
  return app;
}

describe('console static files', () => {
  let out: string;
  let build: ConsoleBuild;
  let app: FastifyInstance;

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'console-build-'));
    build = await buildConsole(ROOT, { out });
    app = await consoleServer(out);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await rm(out, { recursive: true, force: true });
  });

  it('serves the page with the CSP, no-store of nothing secret, and a hashed script under the gzip budget', async () => {
    const page = await app.inject({ method: 'GET', url: '/console' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("default-src 'self'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.body).toContain(`/console/assets/${build.script}`);
    expect(build.script_gzip_bytes).toBeLessThan(SCRIPT_BUDGET_GZIP_BYTES);

    const script = await app.inject({ method: 'GET', url: `/console/assets/${build.script}` });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toContain('immutable');
    expect(script.headers['content-security-policy']).toBe(CONSOLE_CSP);
    // No CDN or other origin: the only absolute URLs in the bundle are XML namespace names.
    const urls = [...new Set(script.body.match(/https?:\/\/[^"'`\s)]+/g) ?? [])];
    expect(urls.filter((u) => !u.startsWith('http://www.w3.org/'))).toEqual([]);
  });

  it('links a tab icon it serves itself, so the browser asks for no /favicon.ico', async () => {
    const page = await app.inject({ method: 'GET', url: '/console' });
    const href = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)"/.exec(page.body)?.[1];
    expect(href).toBe(`/console/assets/${build.icon}`);
    const icon = await app.inject({ method: 'GET', url: href! });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  });

  it('answers 404 for anything that is not an asset of the build', async () => {
    for (const url of ['/console/assets/..%2F..%2Fpackage.json', '/console/assets/.hidden.js', '/console/assets/app.exe', '/console/assets/missing-000000.js']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json().code, url).toBe('not_found');
    }
  });

  it('says how to build it when the files are missing', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'console-empty-'));
    const bare = await consoleServer(empty);
    try {
      const response = await bare.inject({ method: 'GET', url: '/console' });
      expect(response.statusCode).toBe(404);
      expect(response.json().detail).toContain('npm run build');
    } finally {
      await bare.close();
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('fails the build when the script is over its budget', async () => {
    const tiny = await mkdtemp(join(tmpdir(), 'console-budget-'));
    try {
      await expect(buildConsole(ROOT, { out: tiny, budget: 1000 })).rejects.toThrow(/over the 1000-byte budget/);
    } finally {
      await rm(tiny, { recursive: true, force: true });
    }
  });
});

describe('SERVICE_CONSOLE', () => {
  it('is on by default and public; false removes the route', async () => {
    const on = await startServer();
    const route = registeredRoutes(on.server).find((r) => r.method === 'GET' && r.url === '/console');
    expect(route?.config.public).toBe(true);
    const off = await startServer({ SERVICE_CONSOLE: 'false' });
    expect(registeredRoutes(off.server).some((r) => r.url.startsWith('/console'))).toBe(false);
    expect((await off.call('GET', '/console')).statusCode).toBe(404);
  });
});
