import { open } from 'node:fs/promises';
import type { Io } from './context.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { errorObject, type ErrorView } from './print-error.js';
import type { InputLine } from './read-lines.js';
import { nextSignal } from './signals.js';
import { outputNumberReplacer } from '../../src/core/output-numbers.js';

export { maxLineBytesOption, numberedLines, type InputLine, type LineReadStats } from './read-lines.js';

/**
 * `--batch [FILE|-]` of recall and learn (+): many tasks through one process. Lines are read
 * as they arrive (a pipe may be endless), handled `concurrency` at a time, and answered on
 * stdout as NDJSON, one object per non-blank input line and in input order:
 *   {"line": 3, "id"?: …, "result": {…}}   or   {"line": 3, "id"?: …, "error": {message, exit_code, …}}
 * A failed line never stops the run; the exit code is the largest any line ended with.
 */
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
 * How the lines' requests are sent: one request per line (`one`), or up to `size` lines in one
 * request of at most about `bytes` (`many`, answered in request order: a value, or an Error
 * for that line alone).
 */
export type LineSender<T> =
  | { one: (request: T) => Promise<unknown> }
  | { many: (requests: T[]) => Promise<unknown[]>; size: number; bytes: number };

/** A line on its way: its request once parsed, then its result or failure. */
interface Entry<T> {
  input: InputLine;
  id?: unknown;
  request?: T;
  failed?: boolean;
  outcome?: unknown;
}

const NEXT_TURN = Symbol('next turn');
/** Settles after everything already on its way (lines of a chunk in hand) has been handed out. */
const nextTurn = () => new Promise<typeof NEXT_TURN>((resolve) => setImmediate(() => resolve(NEXT_TURN)));

/**
 * Runs the lines' requests with at most `concurrency` requests in flight and writes the
 * answers in input order. With a `many` sender a request takes the lines already read (up to
 * its size): a file goes in full groups, a pipe that is typed into line by line is not kept
 * waiting for a group to fill. Requests ahead of the oldest unanswered one are not started
 * more than a window beyond it, so one slow request cannot make the reorder buffer grow
 * without bound.
 * A first SIGINT or SIGTERM stops starting requests: those in flight finish and are answered
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
  sender: LineSender<T> | ((request: T) => Promise<unknown>),
): Promise<number> {
  const send: LineSender<T> = typeof sender === 'function' ? { one: sender } : sender;
  const groupSize = 'many' in send ? send.size : 1;
  const iterator = lines[Symbol.asyncIterator]();
  const window = Math.max(options.concurrency * 32, 64);
  const done = new Map<number, { text: string; lines: number; last: number }>();
  let started = 0;
  let written = 0;
  let linesStarted = 0;
  let linesWritten = 0;
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
    io.stderr.write(`${name} received: sending no more lines; answering the ${linesStarted - linesWritten} in flight (again to stop at once)\n`);
    waiting.splice(0).forEach((resume) => resume());
    return null;
  });

  const writeReady = () => {
    while (done.has(written)) {
      const answer = done.get(written)!;
      io.stdout.write(answer.text);
      lastAnswered = answer.last;
      linesWritten += answer.lines;
      done.delete(written);
      written++;
      options.progress?.answered(linesWritten);
    }
    waiting.splice(0).forEach((resume) => resume());
  };

  const prepare = (input: InputLine): Entry<T> => {
    try {
      if (input.oversize) throw oversizeError(input.oversize);
      const parsed = parse(input);
      return { input, id: parsed.id, request: parsed.request };
    } catch (err) {
      return { input, failed: true, outcome: err };
    }
  };
  const weight = (entry: Entry<T>) => (entry.failed ? 0 : Buffer.byteLength(JSON.stringify(entry.request)) + 1);

  // Groups are filled one at a time, so their lines follow input order whichever worker asks.
  let pending: Promise<IteratorResult<InputLine>> | null = null;
  let ended = false;
  let carried: Entry<T> | null = null;
  const pull = () => (pending ??= iterator.next());
  const fill = async (): Promise<{ index: number; entries: Entry<T>[] } | null> => {
    if (stoppedBy !== null) return null;
    let first = carried;
    carried = null;
    if (first === null) {
      if (ended) return null;
      const r = await Promise.race([pull(), stopped]);
      // After a stop signal, a line that arrives is not started.
      if (r === null || stoppedBy !== null) return null;
      pending = null;
      if (r.done) {
        ended = true;
        return null;
      }
      first = prepare(r.value);
    }
    const entries = [first];
    let bytes = 'many' in send ? weight(first) : 0;
    while ('many' in send && entries.length < groupSize && !ended) {
      const r = await Promise.race([pull(), nextTurn()]);
      if (r === NEXT_TURN) break;
      pending = null;
      if (r.done) {
        ended = true;
        break;
      }
      const entry = prepare(r.value);
      const w = weight(entry);
      if (bytes + w > send.bytes) {
        carried = entry;
        break;
      }
      entries.push(entry);
      bytes += w;
    }
    linesStarted += entries.length;
    return { index: started++, entries };
  };
  let filling: Promise<unknown> = Promise.resolve();
  const takeGroup = () => {
    const next = filling.then(fill);
    filling = next.catch(() => undefined);
    return next;
  };

  const sendGroup = async (entries: Entry<T>[]): Promise<void> => {
    const sendable = entries.filter((e) => !e.failed);
    if (sendable.length === 0) return;
    if ('one' in send) {
      await send.one(sendable[0].request as T).then((result) => {
        sendable[0].outcome = result;
      }, (err: unknown) => {
        sendable[0].failed = true;
        sendable[0].outcome = err;
      });
      return;
    }
    try {
      const outcomes = await send.many(sendable.map((e) => e.request as T));
      sendable.forEach((e, i) => {
        e.outcome = outcomes[i];
        e.failed = outcomes[i] instanceof Error;
      });
    } catch (err) {
      // The request as a whole failed (unreachable, rate limited past --retry-wait): every line of it did.
      for (const e of sendable) Object.assign(e, { failed: true, outcome: err });
    }
  };

  const format = (e: Entry<T>): string => {
    const head = { line: e.input.line, ...(e.id === undefined ? {} : { id: e.id }) };
    if (!e.failed) return `${JSON.stringify({ ...head, result: e.outcome }, outputNumberReplacer)}\n`;
    const error = errorObject(e.outcome, view, io.program);
    worst = Math.max(worst, error.exit_code as number);
    return `${JSON.stringify({ ...head, error })}\n`;
  };

  const worker = async () => {
    for (;;) {
      while (stoppedBy === null && started - written >= window) await new Promise<void>((resolve) => waiting.push(resolve));
      if (stoppedBy !== null) return;
      const group = await takeGroup();
      if (group === null) return;
      await sendGroup(group.entries);
      const last = group.entries[group.entries.length - 1].input.line;
      done.set(group.index, { text: group.entries.map(format).join(''), lines: group.entries.length, last });
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
