import { randomBytes } from 'node:crypto';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from './fs-durable.js';

export const LOCK_FILE = 'service.lock';

/**
 * Ownership of a data path; the file holds "<pid> <token> <boot>:<start>": the token so release
 * never removes a successor's lock, the boot and start time so a reused PID is not mistaken for
 * the owner.
 */
export interface DataLock {
  readonly file: string;
  /** True while the lock file on disk is still ours. */
  held(): Promise<boolean>;
  release(): Promise<void>;
}

/**
 * What tells a running process apart from a later one that got the same PID: the boot it runs
 * in and its start time (clock ticks since boot, field 22 of /proc/<pid>/stat). Written into
 * the lock as "<boot>:<start>"; absent where there is no /proc (the PID alone is then trusted).
 */
async function identityOf(pid: number | 'self'): Promise<{ state: string; identity: string } | null> {
  let stat: string;
  let boot: string;
  try {
    [stat, boot] = await Promise.all([
      readFile(`/proc/${pid}/stat`, 'utf8'),
      readFile('/proc/sys/kernel/random/boot_id', 'utf8'),
    ]);
  } catch {
    return null;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so fields count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], identity: `${boot.trim()}:${fields[19]}` };
}

/** Tokens of the locks this process holds now (a second storage instance on one path is refused). */
const heldHere = new Set<string>();

/**
 * Whether the lock's owner still runs. Ours by PID but not held by this process: a previous
 * life of ours (the restarted container is PID 1 again). Another PID: it must exist, not be a
 * zombie (exited, not yet reaped), and be the process the lock recorded, not a newer one that
 * was given the same PID.
 */
async function ownerAlive(holder: LockHolder): Promise<boolean> {
  if (holder.pid === process.pid) return heldHere.has(holder.token);
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = await identityOf(holder.pid);
  if (now === null) return existsInProc(holder.pid);
  if (now.state === 'Z' || now.state === 'X') return false;
  return holder.identity === null || holder.identity === now.identity;
}

/** Without a readable /proc/<pid>/stat: gone if /proc says so, else trust the signal probe. */
async function existsInProc(pid: number): Promise<boolean> {
  try {
    await readFile('/proc/self/stat');
  } catch {
    return true; // no /proc at all (not Linux): kill(pid, 0) answered that it exists
  }
  try {
    await readFile(`/proc/${pid}/stat`);
    return true;
  } catch {
    return false;
  }
}

interface LockHolder {
  pid: number;
  token: string;
  /** "<boot>:<start>" of the owner, or null in a lock written without /proc (or by an older version). */
  identity: string | null;
}

async function readLock(file: string): Promise<LockHolder | null> {
  try {
    const [pid, token, identity] = (await readFile(file, 'utf8')).trim().split(/\s+/);
    const n = Number(pid);
    return Number.isInteger(n) && n > 0 ? { pid: n, token: token ?? '', identity: identity ?? null } : null;
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
 * OOM kill, power loss) is taken over, whatever PID the new process got (ownerAlive). Two processes taking over the same stale lock in the same
 * instant is not guarded against; starting the service twice at once on one path is already
 * an operator error that the normal path reports.
 */
export async function acquireLock(dataPath: string): Promise<DataLock> {
  const file = path.join(dataPath, LOCK_FILE);
  const token = randomBytes(8).toString('hex');
  const self = await identityOf('self');
  const content = `${process.pid} ${token}${self ? ` ${self.identity}` : ''}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await createExclusive(file, content)) {
      await fsyncDir(dataPath);
      heldHere.add(token);
      return {
        file,
        async held() {
          return (await readLock(file))?.token === token;
        },
        async release() {
          heldHere.delete(token);
          if ((await readLock(file))?.token === token) await rm(file, { force: true });
        },
      };
    }
    const holder = await readLock(file);
    if (holder && (await ownerAlive(holder))) {
      throw new Error(`data path ${dataPath} is in use by pid ${holder.pid} (lock file ${file}); stop that process first`);
    }
    await rm(file, { force: true }); // stale: its owner is dead
  }
  throw new Error(`could not lock data path ${dataPath} (lock file ${file} keeps reappearing)`);
}
