import { open } from 'node:fs/promises';
import type { Io } from './context.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { errorObject, type ErrorView } from './print-error.js';
import { outputNumberReplacer } from '../../src/core/output-numbers.js';

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

/** The non-blank lines of a stream, numbered, without their line ends. */
export async function* numberedLines(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<InputLine> {
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  let line = 0;
  const flush = function* (final: boolean): Generator<InputLine> {
    let at: number;
    while ((at = pending.indexOf('\n')) >= 0 || (final && pending !== '')) {
      const end = at >= 0 ? at : pending.length;
      const text = pending.slice(0, end).replace(/\r$/, '');
      pending = at >= 0 ? pending.slice(at + 1) : '';
      line++;
      if (text.trim() !== '') yield { line, text };
    }
  };
  for await (const chunk of chunks) {
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    yield* flush(false);
  }
  pending += decoder.decode();
  yield* flush(true);
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

/**
 * Runs `handle` over every line with at most `concurrency` in flight and writes the answers in
 * input order. Lines ahead of the oldest unanswered one are not started more than a window
 * beyond it, so one slow line cannot make the reorder buffer grow without bound.
 * Returns the run's exit code: the largest of the lines' (0 when all succeeded).
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
  const done = new Map<number, string>();
  let started = 0;
  let written = 0;
  let worst: number = ExitCode.OK;
  // Workers waiting for the oldest answer to be written (the window is full).
  const waiting: (() => void)[] = [];
  // Fields of a line are named as in the line (`eval_score`), not as the command's flags.
  const view: ErrorView = { ...options.view, json: true, flags: undefined };

  const writeReady = () => {
    while (done.has(written)) {
      io.stdout.write(done.get(written)!);
      done.delete(written);
      written++;
      options.progress?.answered(written);
    }
    waiting.splice(0).forEach((resume) => resume());
  };
  // The index is taken as the generator hands the line out, so indices follow input order
  // whichever worker asked.
  const nextLine = () => iterator.next().then((r) => (r.done ? null : { index: started++, input: r.value }));

  const answer = async (input: InputLine): Promise<string> => {
    let id: unknown;
    try {
      const parsed = parse(input);
      id = parsed.id;
      const result = await handle(parsed.request);
      return `${JSON.stringify({ line: input.line, ...(id === undefined ? {} : { id }), result }, outputNumberReplacer)}\n`;
    } catch (err) {
      const error = errorObject(err, view);
      worst = Math.max(worst, error.exit_code as number);
      return `${JSON.stringify({ line: input.line, ...(id === undefined ? {} : { id }), error })}\n`;
    }
  };

  const worker = async () => {
    for (;;) {
      while (started - written >= window) await new Promise<void>((resolve) => waiting.push(resolve));
      const next = await nextLine();
      if (next === null) return;
      done.set(next.index, await answer(next.input));
      writeReady();
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return worst;
}
