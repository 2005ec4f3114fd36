import { open } from 'node:fs/promises';
import { Option } from 'commander';
import type { Io } from './context.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { errorObject, type ErrorView } from './print-error.js';
import { integerIn } from './options.js';
import { nextSignal } from './signals.js';
import { DEFAULT_MAX_BODY_SIZE } from '../../src/config/http.js';

/**
 * `--batch [FILE|-]` of recall and learn (+): many tasks through one process. Lines are read
 * as they arrive (a pipe may be endless), handled `concurrency` at a time, and answered on
 * stdout as NDJSON, one object per non-blank input line and in input order:
 *   {"line": 3, "id"?: …, "result": {…}}   or   {"line": 3, "id"?: …, "error": {message, exit_code, …}}
 * A failed line never stops the run; the exit code is the largest any line ended with.
 */
export interface InputLine {
  /** 1-based line number in the input. */
  line: number;
  text: string;
  /** A line longer than the cap: its size and the cap, in bytes (its text is not kept). */
  oversize?: { bytes: number; limit: number };
}

/** What a line asks for, once parsed: the request, and the `id` to echo back. */
export interface LineRequest<T> {
  request: T;
  id?: unknown;
}

/** Opens FILE (or stdin for `-`); a missing file is a usage error before anything is sent. */
export async function batchInput(source: string, io: Io): Promise<AsyncIterable<Buffer | string>> {
  if (source === '-') return io.stdin;
  try {
    const handle = await open(source, 'r');
    return handle.createReadStream();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message;
    throw new UsageError(`cannot read the --batch file "${source}": ${why}`);
  }
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

/** A JSON object line (`{…}`); anything else that starts with `{` is an error of that line. */
export function parseObjectLine(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError('not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError('expected a JSON object');
  return value as Record<string, unknown>;
}

export interface BatchProgress {
  /** Called after each answered line with the count so far. */
  answered(count: number): void;
}

/** The answer of a line that was not read whole: over the byte cap, so never sent. */
function oversizeError(oversize: { bytes: number; limit: number }): UsageError {
  const n = (x: number) => x.toLocaleString('en-US');
  return new UsageError(`line is ${n(oversize.bytes)} bytes, over the ${n(oversize.limit)}-byte limit of a --batch line (--max-line-bytes): not sent`);
}

/**
 * Runs `handle` over every line with at most `concurrency` in flight and writes the answers in
 * input order. Lines ahead of the oldest unanswered one are not started more than a window
 * beyond it, so one slow line cannot make the reorder buffer grow without bound.
 * A first SIGINT or SIGTERM stops starting lines: the lines in flight finish and are answered
 * (a request already sent may have been stored, so it must be reported), then one stderr line
 * names the last line answered; a second signal ends the process at once.
 * Returns the run's exit code: the largest of the lines' (0 when all succeeded; at least 1
 * when interrupted).
 */
export async function runLines<T>(
  io: Io,
  lines: AsyncIterable<InputLine>,
  options: { concurrency: number; view: ErrorView; progress?: BatchProgress },
  parse: (line: InputLine) => LineRequest<T>,
  handle: (request: T) => Promise<unknown>,
): Promise<number> {
  const iterator = lines[Symbol.asyncIterator]();
  const window = Math.max(options.concurrency * 32, 64);
  const done = new Map<number, { text: string; line: number }>();
  let started = 0;
  let written = 0;
  let lastAnswered: number | null = null;
  let worst: number = ExitCode.OK;
  // Workers waiting for the oldest answer to be written (the window is full).
  const waiting: (() => void)[] = [];
  // Fields of a line are named as in the line (`eval_score`), not as the command's flags.
  const view: ErrorView = { ...options.view, json: true, flags: undefined };

  let stoppedBy: NodeJS.Signals | null = null;
  const signal = nextSignal(['SIGINT', 'SIGTERM']);
  const stopped = signal.received.then((name) => {
    stoppedBy = name;
    const inFlight = started - written;
    io.stderr.write(`${name} received: sending no more lines; answering the ${inFlight} in flight (again to stop at once)\n`);
    waiting.splice(0).forEach((resume) => resume());
    return null;
  });

  const writeReady = () => {
    while (done.has(written)) {
      const answer = done.get(written)!;
      io.stdout.write(answer.text);
      lastAnswered = answer.line;
      done.delete(written);
      written++;
      options.progress?.answered(written);
    }
    waiting.splice(0).forEach((resume) => resume());
  };
  // The index is taken as the generator hands the line out, so indices follow input order
  // whichever worker asked. A line that arrives after a stop signal is not started.
  const nextLine = () => Promise.race([
    iterator.next().then((r) => (r.done || stoppedBy !== null ? null : { index: started++, input: r.value })),
    stopped,
  ]);

  const answer = async (input: InputLine): Promise<string> => {
    let id: unknown;
    try {
      if (input.oversize) throw oversizeError(input.oversize);
      const parsed = parse(input);
      id = parsed.id;
      const result = await handle(parsed.request);
      return `${JSON.stringify({ line: input.line, ...(id === undefined ? {} : { id }), result })}\n`;
    } catch (err) {
      const error = errorObject(err, view, io.program);
      worst = Math.max(worst, error.exit_code as number);
      return `${JSON.stringify({ line: input.line, ...(id === undefined ? {} : { id }), error })}\n`;
    }
  };

  const worker = async () => {
    for (;;) {
      while (stoppedBy === null && started - written >= window) await new Promise<void>((resolve) => waiting.push(resolve));
      if (stoppedBy !== null) return;
      const next = await nextLine();
      if (next === null) return;
      done.set(next.index, { text: await answer(next.input), line: next.input.line });
      writeReady();
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    signal.dispose();
  }
  if (stoppedBy !== null) {
    const upTo = lastAnswered === null ? 'no line was answered' : `every line up to line ${lastAnswered} is answered above`;
    io.stderr.write(`interrupted by ${stoppedBy}: ${upTo}; the lines after it were not sent\n`);
    worst = Math.max(worst, ExitCode.FAILURE);
  }
  return worst;
}
