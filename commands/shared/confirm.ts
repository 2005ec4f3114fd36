import type { Command } from 'commander';
import type { Io } from './context.js';
import { UsageError } from './exit-codes.js';
import { forTerminal } from './terminal-text.js';

/**
 * Irreversible commands (`aging`, `governance retention apply`, `migrate down`, `keys revoke`,
 * `keys rotate`, the governance deletions) are safe by default: on a terminal they ask, and without one they
 * refuse unless `--yes` was given, so a script never deletes data by accident and never hangs
 * on a question. Use:
 *
 *   addYesOption(cmd);
 *   ...
 *   if (!(await confirmDestructive(io, opts, { action: 'delete project p1', question: 'Delete project p1 and all its data?' }))) {
 *     return ExitCode.FAILURE; // the person said no; "cancelled" was printed
 *   }
 */
export interface YesOptionValues {
  yes?: boolean;
}

export function addYesOption(cmd: Command): Command {
  return cmd.option('-y, --yes', 'do not ask for confirmation (required when there is no terminal to ask on)');
}

/** A prompt is possible: a person at a terminal, and not a CI job. */
export function canPrompt(io: Io): boolean {
  return io.stdin.isTTY === true && !io.env.ci;
}

export interface Confirmation {
  /** What is about to happen, for the refusal: "revoke key k1", "revert migration 0003". */
  action: string;
  /** The yes/no question shown on a terminal (default answer: no). */
  question: string;
}

/**
 * True when the action may go ahead: `--yes`, or a person answered yes. False when the person
 * said no (a line "cancelled" is printed on stderr). Throws a usage error (exit 2) when nobody
 * can be asked and `--yes` is missing.
 */
export async function confirmDestructive(io: Io, opts: YesOptionValues, confirmation: Confirmation): Promise<boolean> {
  if (opts.yes) return true;
  if (!canPrompt(io)) {
    throw new UsageError(`refusing to ${confirmation.action} without confirmation: pass --yes (there is no terminal to ask on)`);
  }
  // Loaded only when a question is asked.
  const { confirm } = await import('@inquirer/prompts');
  let yes: boolean;
  try {
    yes = await confirm({ message: forTerminal(confirmation.question), default: false }, {
      input: io.stdin as unknown as NodeJS.ReadableStream,
      output: io.stderr as unknown as NodeJS.WritableStream,
    });
  } catch (err) {
    if (err instanceof Error && (err.name === 'ExitPromptError' || err.name === 'AbortPromptError')) yes = false;
    else throw err;
  }
  if (!yes) io.stderr.write('cancelled: nothing was changed\n');
  return yes;
}
