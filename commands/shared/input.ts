import { readFile } from 'node:fs/promises';
import type { InStream } from './context.js';
import { UsageError } from './exit-codes.js';

/**
 * Text arguments accept three forms:
 *   -         read standard input (one trailing newline is dropped, so `echo x |` gives "x")
 *   @path     read the file at path (verbatim)
 *   anything  the literal text
 * `what` names the argument in error messages (e.g. "--code").
 */
export async function readTextArg(value: string, stdin: InStream, what: string): Promise<string> {
  if (value === '-') return dropFinalNewline(await readStdin(stdin));
  if (value.startsWith('@') && value.length > 1) return readTextFile(value.slice(1), what);
  return value;
}

/** True when the argument will consume stdin (at most one argument may). */
export function readsStdin(value: string | undefined): boolean {
  return value === '-';
}

/** Fails with a usage error when more than one argument wants stdin. */
export function assertSingleStdin(args: Record<string, string | undefined>): void {
  const users = Object.entries(args).filter(([, v]) => readsStdin(v)).map(([name]) => name);
  if (users.length > 1) throw new UsageError(`only one argument can read stdin ("-"), got ${users.join(' and ')}`);
}

export async function readStdin(stdin: InStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

export async function readTextFile(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${what} file "${path}": ${fileProblem(err)}`);
  }
}

function fileProblem(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return err instanceof Error ? err.message : String(err);
}

function dropFinalNewline(s: string): string {
  return s.replace(/\r?\n$/, '');
}
