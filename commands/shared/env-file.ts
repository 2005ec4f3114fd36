import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { UsageError } from './exit-codes.js';

/**
 * `--env-file FILE` (+): SERVICE_URL, SERVICE_API_KEY, SERVICE_PROJECT… from a dotenv file,
 * parsed by Node's own parser (the same syntax as `node --env-file`). Found on the command
 * line before commander runs, because option defaults (--url, --api-key) come from it.
 */
export function envFileArgument(args: string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') break;
    if (args[i] === '--env-file') {
      const file = args[i + 1];
      if (file === undefined || file.startsWith('-')) throw new UsageError('--env-file needs a file');
      return file;
    }
    if (args[i].startsWith('--env-file=')) return args[i].slice('--env-file='.length);
  }
  return null;
}

export function readEnvFile(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new UsageError(`cannot read --env-file "${file}": ${why}`);
  }
  return parseEnv(text) as Record<string, string>;
}
