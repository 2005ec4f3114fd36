import { setFlagsFromString } from 'node:v8';
import type { Io } from './shared/context.js';
import { commandOf } from './shared/command-line.js';
import { cliVersion } from './shared/package-info.js';

/**
 * The commands that run the service in this process (the server, migrations, reindex,
 * calibration); every other command is a client of a running service.
 * test/unit/cli-entry.test.ts keeps this list equal to the commands that import the app.
 */
export const IN_PROCESS_COMMANDS: ReadonlySet<string> = new Set(['serve', 'reindex', 'migrate', 'migrate-data', 'calibrate']);

/**
 * What bin/service.js runs. A bare `service --version` (shell prompts and scripts call it in
 * loops) is answered here, before commander and the program are loaded; everything else goes
 * to main(), which the bundle loads only then.
 */
export async function run(argv: string[], io?: Io): Promise<number> {
  const args = argv.slice(2);
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    (io?.stdout ?? process.stdout).write(`${cliVersion()}\n`);
    return 0;
  }
  const command = commandOf(args);
  if (command === undefined || !IN_PROCESS_COMMANDS.has(command)) {
    // A client call parses a few small HTTP answers with undici's WebAssembly parser. V8
    // would also compile that parser a second time, optimised, on background threads: about
    // 100 ms of CPU per call, which on a busy two-core machine is most of a `service recall`.
    // The baseline compiler alone is plenty for a client; the server keeps the default.
    setFlagsFromString('--liftoff-only');
  }
  const { main } = await import('./main.js');
  return main(argv, io);
}
