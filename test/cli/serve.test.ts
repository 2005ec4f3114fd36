import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/** `service serve`: address line, graceful drain on SIGTERM, exit 0, data kept across restarts. */

let dir: { path: string; remove(): Promise<void> };
const started: ServerHandle[] = [];

beforeAll(async () => {
  dir = await tempDir('cli-serve-');
});
afterAll(async () => {
  // Only matters when a test failed half-way: finished servers are already stopped.
  await Promise.all(started.map((s) => s.stop('SIGKILL')));
  await dir.remove();
});

/** Everything a raw socket receives: wait for a piece of it, or for the end of the connection. */
function record(socket: Socket) {
  let received = '';
  const waiters = new Set<() => void>();
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('utf8');
    [...waiters].forEach((w) => w());
  });
  const ended = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  const until = (text: string) => new Promise<void>((resolve, reject) => {
    const check = () => {
      if (received.includes(text)) {
        waiters.delete(check);
        resolve();
      }
    };
    waiters.add(check);
    check();
    void ended.then(() => reject(new Error(`connection closed before "${text}"; received: ${JSON.stringify(received)}`)));
  });
  return { until, ended };
}

describe('service serve', () => {
  it('prints its address, drains an in-flight request on SIGTERM, exits 0, and keeps the data', async () => {
    const dataPath = join(dir.path, 'data');
    const server = await startServer({ dataPath, args: ['--host', '127.0.0.1'] });
    started.push(server);
    expect(server.stdout()).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\n$/);

    // A request whose headers the server has accepted (it answered 100 Continue) but whose
    // body has not been sent yet: in flight for certain when the signal arrives.
    const body = JSON.stringify({ task: 'drain the in-flight request before exiting', code: 'await close()', eval_score: 7 });
    const socket = connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /v1/learn HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    );
    const conversation = record(socket);
    await conversation.until('100 Continue');

    server.child.kill('SIGTERM');
    await server.waitForStderr('SIGTERM received');
    socket.write(body);
    // Connection: close, so the server ends the connection after its answer.
    const answer = (await conversation.ended).replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');

    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ stored: true, pattern_count: 1 });
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stderr()).toContain('server stopped');

    // Same data path, new process: the drained request was persisted; SIGINT also exits 0.
    const again = await startServer({ dataPath });
    started.push(again);
    const exported = await runCli(['export', '--url', again.url]);
    expect((JSON.parse(exported.stdout) as { records: { task: string }[] }).records.map((r) => r.task))
      .toEqual(['drain the in-flight request before exiting']);
    expect(await again.stop('SIGINT')).toEqual({ code: 0, signal: null });
    expect(again.stderr()).toContain('SIGINT received');
  });

  it('refuses --workers 2 on JSON storage with a clear message and exit code 2', async () => {
    const dataPath = join(dir.path, 'workers');
    const result = await runCli(['serve', '--port', '0', '--workers', '2'], { env: { SERVICE_DATA_PATH: dataPath } });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--workers 2: JSON storage allows one server process');
    expect(result.stderr).toContain('SERVICE_STORAGE=postgres');
  });
});
