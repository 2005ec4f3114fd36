/**
 * The command named on a command line (argv without node and the script): its first word that
 * is neither an option nor the value of `--env-file`, the one global option that takes one.
 */
export function commandOf(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--env-file') i++;
    else if (!args[i].startsWith('-')) return args[i];
  }
  return undefined;
}
