import { Option } from 'commander';
import { DEFAULT_MAX_BODY_SIZE } from '../../src/config/http.js';
import { integerIn } from './options.js';

/** One line of a --batch input. */
export interface InputLine {
  /** 1-based line number in the input. */
  line: number;
  text: string;
  /** A line longer than the cap: its size and the cap, in bytes (its text is not kept). */
  oversize?: { bytes: number; limit: number };
}

/**
 * The byte cap of one --batch line unless --max-line-bytes says otherwise: the server's
 * default body limit, so a line the server could not take is refused here, before sending.
 */
export const DEFAULT_MAX_LINE_BYTES = DEFAULT_MAX_BODY_SIZE;

/** `--max-line-bytes`, shared by the commands that take --batch. */
export function maxLineBytesOption(): Option {
  return new Option('--max-line-bytes <n>', 'with --batch: refuse a line longer than this many bytes without sending it (default: the server\'s default body limit)')
    .argParser(integerIn(1, Number.MAX_SAFE_INTEGER))
    .default(DEFAULT_MAX_LINE_BYTES);
}

/** Work counters of numberedLines(): each input byte is scanned once and copied at most once. */
export interface LineReadStats {
  scanned: number;
  copied: number;
}

const NEWLINE = 0x0a;

/**
 * The non-blank lines of a stream, numbered, without their line ends. Each chunk is scanned
 * once for line ends and a line's pieces are joined once at its end, so reading is linear in
 * the input however long a line is. A line over `maxBytes` is not kept: it comes out as
 * `oversize` (its byte count) with empty text, and its bytes are only counted.
 */
export async function* numberedLines(
  chunks: AsyncIterable<Buffer | string>,
  options: { maxBytes?: number; stats?: LineReadStats } = {},
): AsyncGenerator<InputLine> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_LINE_BYTES;
  const stats = options.stats ?? { scanned: 0, copied: 0 };
  let pieces: Buffer[] = [];
  let size = 0;
  let line = 0;
  const take = (piece: Buffer) => {
    size += piece.length;
    if (size <= maxBytes) pieces.push(piece);
    else pieces = [];
  };
  const finish = (): InputLine | null => {
    line++;
    const bytes = size;
    const kept = pieces;
    pieces = [];
    size = 0;
    if (bytes > maxBytes) return { line, text: '', oversize: { bytes, limit: maxBytes } };
    if (kept.length > 1) stats.copied += bytes;
    // A line end is ASCII and never inside a UTF-8 sequence: each line decodes on its own.
    const text = (kept.length === 1 ? kept[0] : Buffer.concat(kept, bytes)).toString('utf8').replace(/\r$/, '');
    return text.trim() === '' ? null : { line, text };
  };
  for await (const chunk of chunks) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let from = 0;
    for (;;) {
      const at = buffer.indexOf(NEWLINE, from);
      const end = at < 0 ? buffer.length : at;
      stats.scanned += (at < 0 ? end : end + 1) - from;
      if (end > from) take(buffer.subarray(from, end));
      if (at < 0) break;
      const next = finish();
      if (next) yield next;
      from = at + 1;
    }
  }
  if (size > 0) {
    const last = finish();
    if (last) yield last;
  }
}

