import { randomBytes } from 'node:crypto';
import { access, constants, mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UsageError } from './exit-codes.js';

/**
 * Writes a file so that readers see either the old content or the complete new one, never a
 * torn file: write a temp file beside it, flush it to disk, then rename over the target.
 * `data` is the whole content, or a function that writes it (a stream, chunk by chunk).
 */
export async function writeFileAtomic(path: string, data: string | ((handle: FileHandle) => Promise<void>)): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, 'wx');
  } catch (err) {
    throw new UsageError(`cannot write "${path}": ${(err as Error).message}`);
  }
  try {
    if (typeof data === 'string') await handle.writeFile(data, 'utf8');
    else await data(handle);
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
