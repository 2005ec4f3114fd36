import { open } from 'node:fs/promises';
import { scanLines } from './fs-durable.js';

/** What every journal line carries: its sequence number and the operation it records. */
export interface JournalEntry {
  seq: number;
  op: string;
}

export function corruptFile(file: string, lineNo: number, reason: string): Error {
  return new Error(`corrupt JSON storage file ${file} at line ${lineNo}: ${reason}`);
}

/**
 * Applies, in order, every journal line whose sequence number is above `afterSeq` (older ones
 * are already inside the snapshot). Only the very last line may be unreadable — a write the
 * crash cut short — and it is cut off together with any torn tail, so the next append starts
 * on a line of its own; damage anywhere earlier refuses to load, naming file and line.
 * Returns the last sequence number applied (or `afterSeq`) and the bytes kept.
 */
export async function replayJournal<T extends JournalEntry>(
  file: string,
  afterSeq: number,
  apply: (line: T) => void,
): Promise<{ seq: number; bytes: number }> {
  let seq = afterSeq;
  let bad: { lineNo: number; offset: number; reason: string } | null = null;
  const scan = await scanLines(file, (buf, lineNo, offset) => {
    if (bad) throw corruptFile(file, bad.lineNo, bad.reason);
    let line: T;
    try {
      line = JSON.parse(buf.toString('utf8')) as T;
      if (typeof line?.seq !== 'number' || typeof line.op !== 'string') throw new Error('not a journal entry');
    } catch (err) {
      bad = { lineNo, offset, reason: (err as Error).message };
      return;
    }
    if (line.seq <= seq) return;
    seq = line.seq;
    apply(line);
  });
  const keep = bad ? (bad as { offset: number }).offset : scan.completeBytes;
  if (keep < scan.completeBytes + scan.tornBytes) {
    const fh = await open(file, 'r+');
    try {
      await fh.truncate(keep);
      await fh.sync();
    } finally {
      await fh.close();
    }
  }
  return { seq, bytes: keep };
}
