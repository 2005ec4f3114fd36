/**
 * Issue 25 row 2 with real processes: a JSON server killed with -9 restarts on its data path
 * straight away (as soon as its exit is reported, no delay), also when the new process gets the
 * dead one's PID, as a restarted container does: node runs as PID 1 in a fresh PID namespace
 * (`unshare`), exactly as the Dockerfile's image runs it.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

const AS_PID_1 = ['unshare', '--fork', '--pid', '--mount-proc', '--kill-child'];

/** Whether this machine lets us make PID namespaces (root, or user namespaces allowed). */
const canUnshare = await new Promise<boolean>((resolve) => {
  const probe = spawn(AS_PID_1[0], [...AS_PID_1.slice(1), 'true'], { stdio: 'ignore' });
  probe.on('error', () => resolve(false));
  probe.on('close', (code) => resolve(code === 0));
});

let dir: { path: string; remove(): Promise<void> };
const servers: ServerHandle[] = [];

beforeAll(async () => {
  dir = await tempDir('restart-after-kill-');
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGKILL')));
  await dir?.remove();
});

async function start(dataPath: string, wrap?: string[]): Promise<ServerHandle> {
  const server = await startServer({ dataPath, wrap });
  servers.push(server);
  return server;
}

async function learn(url: string, task: string): Promise<void> {
  const res = await fetch(`${url}/v1/learn`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ task, code: 'solve()', eval_score: 7 }),
  });
  expect(res.status).toBe(200);
}

async function tasks(url: string): Promise<string[]> {
  const res = await fetch(`${url}/v1/export`);
  return ((await res.json()) as { records: { task: string }[] }).records.map((r) => r.task).sort();
}

/** The PID (in our namespace) of the one child of `parent`. */
async function childOf(parent: number): Promise<number> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) return Number(entry);
  }
  throw new Error(`no child of ${parent}`);
}

describe('restart of a JSON server after kill -9', () => {
  it('starts again on the same data path as soon as the killed process has exited', async () => {
    const dataPath = join(dir.path, 'plain');
    const first = await start(dataPath);
    await learn(first.url, 'parse a CSV file before the crash');
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const second = await start(dataPath);
    expect(await tasks(second.url)).toEqual(['parse a CSV file before the crash']);
  });

  it.skipIf(!canUnshare)('restarts as PID 1 over the lock of the PID 1 it replaces (container restart)', async () => {
    const dataPath = join(dir.path, 'pid1');
    const first = await start(dataPath, AS_PID_1);
    await learn(first.url, 'render an invoice before the crash');
    const lock = await readFile(join(dataPath, 'service.lock'), 'utf8');
    expect(lock).toMatch(/^1 /); // the server really is PID 1 in its namespace
    process.kill(await childOf(first.child.pid!), 'SIGKILL');
    await first.exited; // unshare reports once its child (our PID 1) is dead and reaped
    expect(await readFile(join(dataPath, 'service.lock'), 'utf8')).toBe(lock); // left behind

    const second = await start(dataPath, AS_PID_1);
    expect(await tasks(second.url)).toEqual(['render an invoice before the crash']);
    expect(await readFile(join(dataPath, 'service.lock'), 'utf8')).toMatch(/^1 /);
    expect(await readFile(join(dataPath, 'service.lock'), 'utf8')).not.toBe(lock);
  });
});
