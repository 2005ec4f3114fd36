import { password } from '@inquirer/prompts';
import type { Io } from './shared/context.js';
import { UsageError } from './shared/exit-codes.js';
import type { Output } from './shared/output.js';

/**
 * Shared by `service bootstrap` and `service keys`: asking a person (only when one is at a
 * terminal) and showing a new secret exactly once.
 */

// Prompts only with a terminal on stdin and never under CI (one rule, in shared/confirm.ts).
export { canPrompt } from './shared/confirm.js';

/** A person pressing Ctrl+C (or closing the terminal) is a cancelled command, not a crash. */
async function asked<T>(question: () => Promise<T>): Promise<T> {
  try {
    return await question();
  } catch (err) {
    if (err instanceof Error && (err.name === 'ExitPromptError' || err.name === 'AbortPromptError')) throw new UsageError('cancelled');
    throw err;
  }
}

function promptContext(io: Io) {
  // Questions go to stderr so stdout carries only the result (JSON stays parseable).
  return { input: io.stdin as unknown as NodeJS.ReadableStream, output: io.stderr as unknown as NodeJS.WritableStream };
}

export function askSecret(io: Io, message: string): Promise<string> {
  return asked(() => password({ message, mask: '*', validate: (v) => (v.trim() === '' ? 'must not be empty' : true) }, promptContext(io)));
}

/**
 * Prints a just-issued key. The secret is in the result (JSON or human), and the warning goes
 * to stderr in both modes: there is no second chance to read the secret.
 */
export function printIssuedSecret(
  io: Io,
  out: Output,
  issued: { key_id: string; secret: string; role: string },
  what: string,
  afterwards: string[] = [],
): void {
  out.result(issued, () => [
    `${what}: ${out.color.bold(issued.key_id)} (role ${issued.role})`,
    `secret: ${issued.secret}`,
  ].join('\n'));
  const lines = ['warning: the secret is shown only this once; store it now (e.g. as SERVICE_API_KEY in a secret manager)', ...afterwards];
  io.stderr.write(`${lines.join('\n')}\n`);
}
