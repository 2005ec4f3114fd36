import { EventEmitter, once } from 'node:events';
import type { OutStream } from './context.js';

/**
 * Writes a chunk of bytes to stdout as it is. Bytes are never decoded chunk by chunk (a
 * character may straddle two chunks and would turn into U+FFFD), and when the stream's buffer
 * is full (write() answers false: a slow pipe reader) we wait for 'drain' before the next
 * chunk, so a large export never piles up in memory.
 */
export async function writeBytes(stream: OutStream, chunk: Uint8Array): Promise<void> {
  if (stream.write(chunk) !== false || !(stream instanceof EventEmitter)) return;
  // Rejects if the stream fails instead (the reader went away: EPIPE).
  await once(stream, 'drain');
}
