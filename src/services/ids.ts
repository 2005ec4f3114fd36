import { randomBytes } from 'node:crypto';

/**
 * Unique, time-ordered, path-safe ids ([0-9a-z], fixed length 18):
 *   9 chars  base36 milliseconds since the epoch (enough until the year 5138),
 *   3 chars  base36 sequence within one millisecond of this process,
 *   6 chars  random, so ids minted by several processes in the same millisecond differ.
 * Fixed width makes lexical order equal time order (storage iterates by id = oldest first).
 */
const TIME_WIDTH = 9;
const SEQ_WIDTH = 3;
const SEQ_LIMIT = 36 ** SEQ_WIDTH;
const RANDOM_WIDTH = 6;

let lastMs = -1;
let seq = 0;

export function newId(now: Date): string {
  let ms = now.getTime();
  // A clock that steps back (or many ids in one ms) must not break the ordering.
  if (ms <= lastMs) {
    ms = lastMs;
    seq++;
    if (seq >= SEQ_LIMIT) {
      ms++;
      seq = 0;
    }
  } else {
    seq = 0;
  }
  lastMs = ms;
  return ms.toString(36).padStart(TIME_WIDTH, '0') + seq.toString(36).padStart(SEQ_WIDTH, '0') + randomSuffix();
}

/** When an id from newId was minted (ms since the epoch); NaN for anything else. */
export function mintedAt(id: string): number {
  return /^[0-9a-z]{18}$/.test(id) ? parseInt(id.slice(0, TIME_WIDTH), 36) : Number.NaN;
}

function randomSuffix(): string {
  const n = randomBytes(4).readUInt32BE(0) % 36 ** RANDOM_WIDTH;
  return n.toString(36).padStart(RANDOM_WIDTH, '0');
}

