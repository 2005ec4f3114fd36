import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UsageError } from './exit-codes.js';

/**
 * Writes a file so that readers see either the old content or the complete new one, never a
 * torn file: write a temp file beside it, flush it to disk, then rename over the target.
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let handle;
  try {
    handle = await open(temp, 'wx');
  } catch (err) {
    throw new UsageError(`cannot write "${path}": ${(err as Error).message}`);
  }
  try {
    await handle.writeFile(data, 'utf8');
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
