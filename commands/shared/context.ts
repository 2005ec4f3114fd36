import type { Command } from 'commander';
import { loadClientEnv, type ClientEnv } from '../../src/config/client.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';
import { printError, type ErrorView } from './print-error.js';

/**
 * A stream as the CLI sees it: where text (or raw bytes, for exports) goes and whether a person
 * is watching. process.stdout is one; so are the in-memory fakes of the tests.
 */
export interface OutStream {
  write(chunk: string | Uint8Array): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface InStream extends AsyncIterable<Buffer | string> {
  isTTY?: boolean;
}

/** Everything a command touches outside itself; tests can pass fakes to main(). */
export interface Io {
  stdout: OutStream;
  stderr: OutStream;
  stdin: InStream;
  env: ClientEnv;
  /**
   * The name the program was called by (`service` or `agent-memory`), set by main(); every
   * command line the CLI suggests uses it (package-info.ts asInvoked()).
   */
  program?: string;
}

export function processIo(): Io {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: loadClientEnv() };
}

interface RunContext {
  io: Io;
  exitCode: number;
}

// One context per program instance (so main() can run several times in one process).
const contexts = new WeakMap<Command, RunContext>();

export function attachContext(program: Command, io: Io): void {
  contexts.set(program, { io, exitCode: ExitCode.OK });
}

function rootOf(cmd: Command): Command {
  let current = cmd;
  while (current.parent) current = current.parent;
  return current;
}

function contextOf(cmd: Command): RunContext {
  const ctx = contexts.get(rootOf(cmd));
  if (!ctx) throw new Error('command is not attached to a program created by main()');
  return ctx;
}

export function ioOf(cmd: Command): Io {
  return contextOf(cmd).io;
}

export function exitCodeOf(program: Command): number {
  return contextOf(program).exitCode;
}

/** --json (or --format json) also makes errors JSON; field errors are named by the flags. */
export function errorViewOf(cmd: Command): ErrorView {
  const opts = cmd.opts<{ json?: boolean; format?: string; retryWait?: number }>();
  const flags = new Set(cmd.options.map((o) => o.long).filter((l): l is string => l !== undefined));
  return { json: opts.json === true || opts.format === 'json', flags, retryWaitSeconds: opts.retryWait };
}

/**
 * Wraps a commander action: the handler returns its exit code (or nothing for 0); anything it
 * throws is printed as `error: <detail>` on stderr and mapped through the exit-code table.
 * Handlers never call process.exit.
 */
export function action<A extends unknown[]>(handler: (...args: A) => Promise<number | void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    // Commander passes the Command itself as the last argument.
    const cmd = args[args.length - 1] as Command;
    const ctx = contextOf(cmd);
    try {
      ctx.exitCode = (await handler(...args)) ?? ExitCode.OK;
    } catch (err) {
      printError(ctx.io, err, errorViewOf(cmd));
      ctx.exitCode = exitCodeFor(err);
    }
  };
}
