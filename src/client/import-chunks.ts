import { MAX_IMPORT_RECORDS } from '../core/vocabulary.js';
import { ApiError } from './errors.js';

export { MAX_IMPORT_RECORDS };

/**
 * Sends `records` in order, in chunks of at most `chunkSize` (kept within 1…10,000; 10,000
 * when absent). A chunk the server refuses as
 * too large (413) is split in half and both halves are sent again, down to single records,
 * so the caller never needs to know the server's body limit; a single record that is still
 * too large, and every other error, is thrown. `offset` is the index of `chunk[0]` in
 * `records`, so per-record answers can be mapped back.
 */
export async function sendSplittingTooLarge<T>(
  records: readonly T[],
  chunkSize: number | undefined,
  send: (chunk: T[], offset: number) => Promise<void>,
): Promise<void> {
  const attempt = async (chunk: T[], offset: number): Promise<void> => {
    try {
      await send(chunk, offset);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 413 && chunk.length > 1)) throw err;
      const half = Math.ceil(chunk.length / 2);
      await attempt(chunk.slice(0, half), offset);
      await attempt(chunk.slice(half), offset + half);
    }
  };
  const size = Math.min(Math.max(1, chunkSize ?? MAX_IMPORT_RECORDS), MAX_IMPORT_RECORDS);
  for (let i = 0; i < records.length; i += size) await attempt(records.slice(i, i + size), i);
}
