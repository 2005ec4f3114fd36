/**
 * `service serve --workers 2` on PostgreSQL: both workers answer on one port, a killed
 * worker is replaced, and SIGTERM drains every worker before the server exits 0.
 * (Runs the built binary, like the CLI tests; JSON's refusal is in test/cli/serve.test.ts.)
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';

const hasPg = await requirePostgres('serve --workers');
const built = existsSync(join(BIN, '..', '..', 'dist', 'commands', 'main.js'));
if (!built) {
  if (process.env.CI && process.env.CI !== 'false') throw new Error('dist/ is missing: `npm test` builds it first');
  console.warn('\n[skip] serve --workers: run `npm run build` first (the test spawns bin/service.js).\n');
}

/** GET /v1/version on a connection of its own (no keep-alive), so the primary hands it to a live worker. */
function versionStatus(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/version', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function workerPids(server: ServerHandle): number[] {
  return [...server.stderr().matchAll(/^worker (\d+) listening$/gm)].map((m) => Number(m[1]));
}

/** Resolves once `count` workers have reported listening (event-driven: re-checks on every stderr chunk). */
function untilWorkersListened(server: ServerHandle, count: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const pids = workerPids(server);
      if (pids.length < count) return;
      server.child.stderr.off('data', check);
      resolve(pids);
    };
    server.child.stderr.on('data', check);
    void server.exited.then(() => reject(new Error(`server exited; stderr:\n${server.stderr()}`)));
    check();
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!hasPg || !built)('service serve --workers 2 on PostgreSQL', () => {
  let db: TestDatabase;
  let dir: { path: string; remove(): Promise<void> };
  let server: ServerHandle | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('serve_workers');
    const schema = await createMigratedSchema(db, 'workers');
    dir = await tempDir('svc-workers-');
    server = await startServer({
      dataPath: dir.path,
      args: ['--workers', '2'],
      env: { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url, SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true' },
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await dir?.remove();
    await db?.drop();
  });

  it('answers from each worker, replaces a killed one, and drains both on SIGTERM', async () => {
    const s = server!;
    // The address line comes once, after both workers listen.
    expect(s.stdout()).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    const [a, b] = workerPids(s);
    expect([a, b].every(isAlive)).toBe(true);
    // Each worker logs its own start-up (here dev auth's warning): every such line names its worker.
    const logLines = s.stderr().split('\n').filter((l) => /^\d{4}-\d\d-\d\dT/.test(l));
    expect(logLines.length).toBeGreaterThanOrEqual(2);
    for (const line of logLines) expect(line).toMatch(/ worker=[12]\b/);
    expect(new Set(logLines.map((l) => /worker=(\d)/.exec(l)?.[1]))).toEqual(new Set(['1', '2']));
    expect(a).not.toBe(b);
    expect(await versionStatus(s.port)).toBe(200);

    // With worker a gone, b alone serves; then a replacement (c) joins.
    process.kill(a, 'SIGKILL');
    await s.waitForStderr(`worker ${a} died (signal SIGKILL); starting a replacement`);
    for (let i = 0; i < 4; i++) expect(await versionStatus(s.port)).toBe(200);
    const c = (await untilWorkersListened(s, 3))[2];
    expect([a, b]).not.toContain(c);

    // With b gone too, the replacement c alone serves: each of the workers answered on its own.
    process.kill(b, 'SIGKILL');
    await s.waitForStderr(`worker ${b} died (signal SIGKILL); starting a replacement`);
    for (let i = 0; i < 4; i++) expect(await versionStatus(s.port)).toBe(200);
    const d = (await untilWorkersListened(s, 4))[3];

    // A learn in flight (headers accepted, body not yet sent) when SIGTERM arrives still completes.
    const body = JSON.stringify({ task: 'finish the in-flight learn while the workers drain', code: 'drain()', eval_score: 7 });
    const socket = connect(s.port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => { received += chunk; });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      'POST /v1/learn HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    );
    await new Promise<void>((resolve) => {
      const check = () => { if (received.includes('100 Continue')) resolve(); };
      socket.on('data', check);
      check();
    });

    s.child.kill('SIGTERM');
    await s.waitForStderr('draining in-flight requests in 2 worker(s)');
    socket.write(body);
    await closed;
    expect(received).toMatch(/HTTP\/1\.1 200 /);
    expect(received).toContain('"stored":true');

    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.stderr()).toContain(`worker ${c} exited (code 0)`);
    expect(s.stderr()).toContain(`worker ${d} exited (code 0)`);
    expect(s.stderr()).toContain('server stopped');
    expect([a, b, c, d].some(isAlive)).toBe(false);
  }, 180_000);
});
