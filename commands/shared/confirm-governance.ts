import { askConfirm, canPrompt } from '../key-secrets.js';
import type { Io } from './context.js';
import { UsageError } from './exit-codes.js';

/**
 * The gate of every destructive governance command: `--yes` goes ahead; a person at a
 * terminal is asked (default no); anything else (a script, a pipe, CI) is refused, because an
 * irreversible deletion must never happen by accident of a missing flag.
 */
export async function confirmDestructive(io: Io, yes: boolean | undefined, question: string): Promise<void> {
  if (yes === true) return;
  if (!canPrompt(io)) {
    throw new UsageError('refusing to delete without --yes: stdin is not a terminal, so nobody can confirm');
  }
  if (!(await askConfirm(io, question))) throw new UsageError('cancelled: nothing was deleted');
}
