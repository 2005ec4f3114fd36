import { ExitCode } from './exit-codes.js';

/**
 * How commander's own errors (unknown command or option, a flag's bad value, a missing
 * argument) are shown. They are found before any action runs, so the command's --json cannot
 * decide; instead --json (or --format json) anywhere on the command line makes them the same
 * JSON object every other error is: `{"error": {"message", "exit_code": 2, "hint"?}}`.
 */
export function jsonRequested(args: readonly string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') return false;
    if (arg === '--json' || arg === '--format=json') return true;
    if (arg === '--format' && args[i + 1] === 'json') return true;
  }
  return false;
}

/** commander's text (`error: unknown command 'x'\n(Did you mean y?)`) as a message and a hint. */
export function describeUsageError(text: string, name = 'service'): { message: string; hint?: string } {
  const lines = text.trim().split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const message = (lines[0] ?? 'bad usage').replace(/^error:\s*/, '');
  const suggestion = lines.slice(1).join(' ').replace(/^\((.*)\)$/, '$1');
  if (suggestion !== '') return { message, hint: suggestion.replace(/^Did you mean/, 'did you mean') };
  // An unknown command with nothing close to it: point to the list instead of printing it.
  if (message.startsWith('unknown command')) return { message, hint: `see \`${name} --help\` for the commands` };
  return { message };
}

/** The text or JSON commander's error becomes on stderr. */
export function formatUsageError(text: string, json: boolean, name = 'service'): string {
  const { message, hint } = describeUsageError(text, name);
  if (json) return `${JSON.stringify({ error: { message, exit_code: ExitCode.USAGE, ...(hint ? { hint } : {}) } })}\n`;
  return `error: ${message}\n${hint ? `  hint: ${hint}\n` : ''}`;
}
