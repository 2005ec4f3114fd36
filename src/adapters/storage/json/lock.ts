import { randomBytes } from 'node:crypto';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from './fs-durable.js';

export const LOCK_FILE = 'service.lock';

/** Ownership of a data path; the file holds "<pid> <token>" so release never removes a successor's lock. */
export interface DataLock {
  readonly file: string;
  /** True while the lock file on disk is still ours. */
  held(): Promise<boolean>;
  release(): Promise<void>;
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readLock(file: string): Promise<{ pid: number; token: string } | null> {
  try {
    const [pid, token] = (await readFile(file, 'utf8')).trim().split(/\s+/);
    const n = Number(pid);
    return Number.isInteger(n) && n > 0 ? { pid: n, token: token ?? '' } : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Creates `file` with `content` only if it does not exist, never exposing a half-written file. */
async function createExclusive(file: string, content: string): Promise<boolean> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, content, { flush: true });
  try {
    await link(tmp, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
    // File systems without hard links: O_EXCL create (a crash mid-write leaves an empty,
    // unreadable lock, which the next start treats as stale).
    try {
      await writeFile(file, content, { flag: 'wx', flush: true });
      return true;
    } catch (inner) {
      if ((inner as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw inner;
    }
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * One process (and one storage instance) per data path. A lock whose process is gone (kill -9,
 * power loss) is taken over. Two processes taking over the same stale lock in the same
 * instant is not guarded against; starting the service twice at once on one path is already
 * an operator error that the normal path reports.
 */
export async function acquireLock(dataPath: string): Promise<DataLock> {
  const file = path.join(dataPath, LOCK_FILE);
  const token = randomBytes(8).toString('hex');
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await createExclusive(file, `${process.pid} ${token}\n`)) {
      await fsyncDir(dataPath);
      return {
        file,
        async held() {
          return (await readLock(file))?.token === token;
        },
        async release() {
          if ((await readLock(file))?.token === token) await rm(file, { force: true });
        },
      };
    }
    const holder = await readLock(file);
    if (holder && isAlive(holder.pid)) {
      throw new Error(`data path ${dataPath} is in use by pid ${holder.pid} (lock file ${file}); stop that process first`);
    }
    await rm(file, { force: true }); // stale: its owner is dead
  }
  throw new Error(`could not lock data path ${dataPath} (lock file ${file} keeps reappearing)`);
}
