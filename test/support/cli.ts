import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv } from './env.js';

/** bin/service.js of this checkout (runs dist/, so `npm run build` must have run). */
export const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'service.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Extra environment (merged over childEnv()); undefined removes a variable. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed (it is always closed, so `-` never waits). */
  input?: string;
  cwd?: string;
  /** The entry to run (default bin/service.js), e.g. bin/agent-memory.js. */
  bin?: string;
}

/** Runs `node bin/service.js ...args` to completion with piped stdio. */
export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [opts.bin ?? BIN, ...args], {
      env: childEnv(opts.env),
      cwd: opts.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.on('error', () => undefined); // the CLI may exit before reading its stdin
    child.stdin.end(opts.input ?? '');
  });
}

/** Shell-quotes one argument for `script -c`. */
function quote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs the CLI under a pseudo-terminal (util-linux `script`), so stdout and stderr are TTYs as
 * for a person at a terminal. Both streams arrive merged in `output`, with CRLF line ends.
 */
export function runCliInTty(
  args: string[],
  opts: Omit<CliOptions, 'input'> & { answer?: { when: string; keys: string } } = {},
): Promise<{ code: number | null; output: string }> {
  // `script` without a terminal of its own creates a 0x0 pty; give it a real size first.
  const command = `stty cols 120 rows 40; ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: childEnv({ TERM: 'xterm-256color', ...opts.env }),
      cwd: opts.cwd,
      stdio: [opts.answer ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let answered = false;
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      output += s;
      // Types the answer once the prompt is on the screen, as a person would.
      if (opts.answer && !answered && output.includes(opts.answer.when)) {
        answered = true;
        child.stdin?.write(opts.answer.keys);
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (output += s));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

// ANSI escape sequences: colours (SGR, ending in m) and cursor/screen control (spinners).
// eslint-disable-next-line no-control-regex
const ANSI_ALL = /\x1b\[[0-9;?]*[A-Za-z]/g;
// eslint-disable-next-line no-control-regex
const ANSI_COLOUR = /\x1b\[[0-9;]*m/;

/** `text` without any escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI_ALL, '');
}

/** True when `text` carries a colour code (cursor control from a spinner does not count). */
export function hasColour(text: string): boolean {
  return ANSI_COLOUR.test(text);
}
