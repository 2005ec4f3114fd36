/**
 * Issue 25 row 2: the JSON data-path lock is taken over whenever its owner is gone, whatever
 * PID the new process got. PID reuse is simulated by writing the lock a previous owner would
 * have left: naming this process's own PID (a restarted container is PID 1 again), naming a
 * live foreign process that is not the owner (another start time), naming a zombie.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, LOCK_FILE, type DataLock } from '../../src/adapters/storage/json/durable/lock.js';

let dir: string;
const locks: DataLock[] = [];
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'json-lock-'));
});
afterEach(async () => {
  await Promise.all(locks.splice(0).map((l) => l.release()));
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

const lockFile = () => path.join(dir, LOCK_FILE);
const take = async () => {
  const lock = await acquireLock(dir);
  locks.push(lock);
  return lock;
};

/** State and "<boot>:<start>" of a process, as the lock records its owner. */
async function procIdentity(pid: number): Promise<{ state: string; identity: string }> {
  const [stat, boot] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile('/proc/sys/kernel/random/boot_id', 'utf8')]);
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], identity: `${boot.trim()}:${fields[19]}` };
}

/** A live process that is not the lock's owner, started and running. */
async function liveStranger(): Promise<number> {
  const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
  children.push(child);
  await new Promise((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  return child.pid!;
}

describe('JSON data-path lock after a crash', () => {
  it('a lock naming this process\'s own PID, left by a previous life, is taken over', async () => {
    // Written by an earlier process that had our PID (old format without identity, and new).
    for (const content of [`${process.pid} oldtoken\n`, `${process.pid} oldtoken ${(await procIdentity(process.pid)).identity}\n`]) {
      await writeFile(lockFile(), content);
      const lock = await take();
      expect(await lock.held()).toBe(true);
      expect(await readFile(lockFile(), 'utf8')).toMatch(new RegExp(`^${process.pid} [0-9a-f]{16} \\S+:\\d+\\n$`));
      await lock.release();
    }
    // While this process really holds the path, a second instance is still refused.
    await take();
    await expect(acquireLock(dir)).rejects.toThrow(`in use by pid ${process.pid}`);
  });

  it('a live foreign PID that started at another time (the PID was reused) is not the owner', async () => {
    const pid = await liveStranger();
    const { identity } = await procIdentity(pid);
    const [boot, start] = identity.split(':');
    await writeFile(lockFile(), `${pid} oldtoken ${boot}:${Number(start) - 1}\n`);
    expect(await (await take()).held()).toBe(true);
    await locks.pop()!.release();

    // The lock's real owner, still running: refused, naming it.
    await writeFile(lockFile(), `${pid} oldtoken ${identity}\n`);
    await expect(acquireLock(dir)).rejects.toThrow(`in use by pid ${pid}`);
  });

  it('a lock whose owner is a zombie (exited, not reaped yet) is taken over', async () => {
    // The forked child exits at once; its parent never calls wait(), so it stays a zombie.
    const parent = spawn('perl', ['-e', 'my $p = fork(); exit 0 if $p == 0; $| = 1; print "$p\\n"; sleep 1000'], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(parent);
    const zombie = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(d.toString()))));
    let seen = await procIdentity(zombie);
    while (seen.state !== 'Z') {
      await new Promise((resolve) => setTimeout(resolve, 5)); // waiting for the condition, not a fixed time
      seen = await procIdentity(zombie);
    }
    await writeFile(lockFile(), `${zombie} oldtoken ${seen.identity}\n`);
    expect(await (await take()).held()).toBe(true);
  });
});
