import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IN_PROCESS_COMMANDS, run } from '../../commands/entry.js';
import { commandsFor } from '../../commands/registry.js';
import { commandOf } from '../../commands/shared/command-line.js';

const COMMANDS_DIR = join(import.meta.dirname, '..', '..', 'commands');

/** Command files that import the app or the server (statically or with import()). */
function commandsThatRunTheService(): string[] {
  return readdirSync(COMMANDS_DIR)
    .filter((f) => f.endsWith('.ts') && f !== 'entry.ts' && f !== 'main.ts' && f !== 'registry.ts')
    .filter((f) => /(from|import\()\s*'\.\.\/(src\/app|server\/)/.test(readFileSync(join(COMMANDS_DIR, f), 'utf8')))
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();
}

describe('the CLI entry', () => {
  it('knows exactly which commands run the service in-process (they keep V8 defaults)', () => {
    expect([...IN_PROCESS_COMMANDS].sort()).toEqual(commandsThatRunTheService());
  });

  it('finds the command after global options, skipping the --env-file value', () => {
    expect(commandOf(['recall', 'x'])).toBe('recall');
    expect(commandOf(['--env-file', 'serve', 'recall'])).toBe('recall');
    expect(commandOf(['--env-file=prod.env', 'serve'])).toBe('serve');
    expect(commandOf(['--help'])).toBeUndefined();
  });

  it('loads only the named command, also after --env-file and its value', () => {
    expect(commandsFor(['recall', 'x'])).toEqual(['recall']);
    expect(commandsFor(['--env-file', 'prod.env', 'recall', 'x'])).toEqual(['recall']);
    expect(commandsFor(['--version'])).toEqual([]);
    expect(commandsFor(['--help']).length).toBeGreaterThan(20);
  });

  it('answers a bare --version without loading the program', async () => {
    let out = '';
    const code = await run(['node', 'service', '--version'], {
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: () => true },
      stdin: (async function* () {})(),
      env: {} as never,
    });
    expect(code).toBe(0);
    expect(out).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
  });
});
