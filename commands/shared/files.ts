import { randomBytes } from 'node:crypto';
import { access, constants, lstat, mkdir, open, readlink, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from './exit-codes.js';

/** Writes one chunk of an output file; a failure is a UsageError naming the file (exit 2). */
export type ChunkWriter = (chunk: Uint8Array | string) => Promise<void>;

/** What the command writes: the whole content, or a function that writes it chunk by chunk. */
export type OutputData = string | ((write: ChunkWriter) => Promise<void>);

/**
 * Where an output path really lands. A regular file (or nothing yet) is written atomically;
 * a FIFO or a device is opened and written in place, since replacing it with a regular file
 * would leave its reader (or /dev/null itself) behind.
 */
export interface OutputTarget {
  /** The path the user named (absolute), as messages and results show it. */
  named: string;
  /** After following symlinks: the node that receives the bytes. */
  path: string;
  kind: 'file' | 'stream';
}

// As the kernel's own limit on symlink hops (ELOOP).
const MAX_SYMLINK_HOPS = 40;

const cannotWrite = (path: string, why: string) => new UsageError(`cannot write "${path}": ${why}`);

/**
 * Follows symlinks to the node that would receive the bytes (a symlink is written through, not
 * replaced), and refuses what cannot hold an output: a directory, a socket, a symlink loop.
 * Checked before any work, so a refused output costs no request.
 */
export async function resolveOutputTarget(given: string): Promise<OutputTarget> {
  const named = resolve(given);
  let path = named;
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    let stats;
    try {
      stats = await lstat(path);
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return { named, path, kind: 'file' };
      throw cannotWrite(named, (err as Error).message);
    }
    if (stats.isSymbolicLink()) {
      path = resolve(dirname(path), await readlink(path));
      continue;
    }
    if (stats.isFile()) return { named, path, kind: 'file' };
    if (stats.isFIFO() || stats.isCharacterDevice() || stats.isBlockDevice()) return { named, path, kind: 'stream' };
    throw cannotWrite(named, stats.isDirectory() ? 'it is a directory' : 'it is not a file, a FIFO or a device');
  }
  throw cannotWrite(named, 'too many levels of symbolic links');
}

/** Writes `data` to a resolved output target (see OutputTarget for how each kind is written). */
export async function writeOutput(target: OutputTarget, data: OutputData): Promise<void> {
  if (target.kind === 'file') return writeFileAtomic(target.path, data, target.named);
  let handle: FileHandle;
  try {
    // No O_CREAT, no O_TRUNC: the node exists and stays what it is. A FIFO blocks here until
    // its reader opens it, as `cat > fifo` would.
    handle = await open(target.path, constants.O_WRONLY);
  } catch (err) {
    throw cannotWrite(target.named, (err as Error).message);
  }
  try {
    await writeAll(handle, data, target.named);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Writes a file so that readers see either the old content or the complete new one, never a
 * torn file: write a temp file beside it, flush it to disk, then rename over the target.
 */
export async function writeFileAtomic(path: string, data: OutputData, named = path): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, 'wx');
  } catch (err) {
    throw cannotWrite(named, (err as Error).message);
  }
  try {
    await writeAll(handle, data, named);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, path);
  } catch (err) {
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw err;
  }
}

async function writeAll(handle: FileHandle, data: OutputData, named: string): Promise<void> {
  const write: ChunkWriter = async (chunk) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    try {
      // One write may take fewer bytes than offered (a pipe, a signal): go on until all are out.
      for (let done = 0; done < bytes.length;) done += (await handle.write(bytes, done, bytes.length - done)).bytesWritten;
    } catch (err) {
      throw cannotWrite(named, (err as Error).message);
    }
  };
  if (typeof data === 'string') await write(data);
  else await data(write);
}

/**
 * Creates the folder of an output file and checks it can be written there, before any work
 * whose result would otherwise be lost (paid LLM calls). Leaves no file behind.
 */
export async function assertWritableFile(path: string, what: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    await access(dirname(path), constants.W_OK);
  } catch (err) {
    throw new UsageError(`cannot write the ${what} file "${path}": ${(err as Error).message}`);
  }
  try {
    await access(path, constants.W_OK);
  } catch (err) {
    // Not there yet is fine (the folder is writable); there but read-only is not.
    if ((err as { code?: string }).code !== 'ENOENT') throw new UsageError(`cannot write the ${what} file "${path}": ${(err as Error).message}`);
  }
}
