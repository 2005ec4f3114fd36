import type { Command } from 'commander';

/**
 * Ends a command's --help with examples (every command has one or two). They are written as
 * `service …` and shown under the name the program was called by (`agent-memory …`).
 */
export function addExamples(cmd: Command, examples: string[]): Command {
  let root = cmd;
  while (root.parent) root = root.parent;
  const program = root.name();
  const named = examples.map((e) => (program === 'service' ? e : e.replace(/(^|\| |… )service(?= )/g, `$1${program}`)));
  return cmd.addHelpText('after', `\nExamples:\n${named.map((e) => `  $ ${e}`).join('\n')}`);
}
