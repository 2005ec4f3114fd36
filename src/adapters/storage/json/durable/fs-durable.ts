import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** Flushes a directory entry table, so a just-created or renamed file survives a power cut. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * mkdir -p that also fsyncs every parent whose entry table changed, so a scope directory
 * created just before an acknowledged write cannot vanish with the machine.
 */
export async function ensureDirDurable(dir: string): Promise<void> {
  const missing: string[] = [];
  let cur = path.resolve(dir);
  for (;;) {
    try {
      await stat(cur);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing.push(cur);
      const parent = path.dirname(cur);
      if (parent === cur) break;
      cur = parent;
    }
  }
  if (missing.length === 0) return;
  await mkdir(dir, { recursive: true });
  // Deepest first is fine: each created directory's parent gets its entry flushed.
  for (const created of missing) await fsyncDir(path.dirname(created));
}

const WRITE_BATCH_BYTES = 1 << 20;

/**
 * Writes a file atomically: temp file in the same directory, fsync, rename over the target,
 * fsync of the directory. Readers see the old or the new content, never a mix. `parts` is
 * consumed lazily, so a large snapshot is never one giant string in memory.
 */
export async function atomicWriteFile(file: string, parts: Iterable<string>): Promise<number> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, 'w');
  let bytes = 0;
  try {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    for (const part of parts) {
      const buf = Buffer.from(part, 'utf8');
      pending.push(buf);
      pendingBytes += buf.length;
      if (pendingBytes >= WRITE_BATCH_BYTES) {
        await writeAll(fh, Buffer.concat(pending, pendingBytes));
        bytes += pendingBytes;
        pending = [];
        pendingBytes = 0;
      }
    }
    if (pendingBytes > 0) {
      await writeAll(fh, Buffer.concat(pending, pendingBytes));
      bytes += pendingBytes;
    }
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  await rename(tmp, file);
  await fsyncDir(dir);
  return bytes;
}

/** Deletes temp files an interrupted atomicWriteFile left behind (only ever ours: dot + .tmp). */
export async function removeStaleTemps(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const name of names) {
    if (name.startsWith('.') && name.endsWith('.tmp')) await rm(path.join(dir, name), { force: true });
  }
}

/** FileHandle.write may write less than asked; loop until the whole buffer is on its way. */
export async function writeAll(fh: import('node:fs/promises').FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    off += bytesWritten;
  }
}

const READ_CHUNK = 4 << 20;

export interface LineScan {
  /** Byte offset just past the last newline: everything after it is a torn (unterminated) tail. */
  completeBytes: number;
  /** Bytes after the last newline (0 when the file ends cleanly). */
  tornBytes: number;
}

/**
 * Calls `onLine` for every newline-terminated line of a file (1-based line number, byte offset
 * of its first byte), reading
 * in chunks so files far larger than the maximum string length still load. A missing file
 * reads as empty.
 */
export async function scanLines(
  file: string,
  onLine: (line: Buffer, lineNo: number, startOffset: number) => void,
): Promise<LineScan> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { completeBytes: 0, tornBytes: 0 };
    throw err;
  }
  try {
    const chunk = Buffer.allocUnsafe(READ_CHUNK);
    let carry: Buffer[] = [];
    let carryBytes = 0;
    let consumed = 0;
    let lineNo = 0;
    for (;;) {
      const { bytesRead } = await fh.read(chunk, 0, READ_CHUNK, null);
      if (bytesRead === 0) break;
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, start);
        if (nl < 0 || nl >= bytesRead) break;
        let line = chunk.subarray(start, nl);
        if (carryBytes > 0) {
          line = Buffer.concat([...carry, line], carryBytes + line.length);
          carry = [];
          carryBytes = 0;
        }
        const startOffset = consumed;
        consumed += line.length + 1;
        onLine(line, ++lineNo, startOffset);
        start = nl + 1;
      }
      if (start < bytesRead) {
        // The chunk buffer is reused, so the unterminated rest must be copied.
        carry.push(Buffer.from(chunk.subarray(start, bytesRead)));
        carryBytes += bytesRead - start;
      }
    }
    return { completeBytes: consumed, tornBytes: carryBytes };
  } finally {
    await fh.close();
  }
}
