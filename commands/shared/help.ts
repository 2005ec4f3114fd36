import type { Command } from 'commander';

/** Ends a command's --help with examples (every command has one or two). */
export function addExamples(cmd: Command, examples: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}`);
}
