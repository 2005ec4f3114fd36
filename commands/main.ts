import { Command, CommanderError } from 'commander';
import { attachContext, exitCodeOf, processIo, type Io } from './shared/context.js';
import { loadClientEnvWithFile } from '../src/config/client.js';
import { readEnvFile, envFileArgument } from './shared/env-file.js';
import { EXIT_CODE_HELP, ExitCode, exitCodeFor } from './shared/exit-codes.js';
import { printError } from './shared/print-error.js';
import { formatUsageError, jsonRequested } from './shared/usage-errors.js';
import { cliVersion, programName } from './shared/package-info.js';
import { addDefaultExamples } from './examples.js';
import { COMMANDS, commandsFor } from './registry.js';

/**
 * The `service` program. Returns the exit code instead of exiting, so tests can call it and
 * bin/service.js decides how the process ends. `argv` is shaped like process.argv.
 * Only the command being run is imported (commands/registry.ts), so start-up stays short.
 */
export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  io = { ...io, program: programName(argv) };
  try {
    const envFile = envFileArgument(argv.slice(2));
    if (envFile !== null) io = { ...io, env: loadClientEnvWithFile(readEnvFile(envFile)) };
  } catch (err) {
    printError(io, err, { json: jsonRequested(argv.slice(2)) });
    return exitCodeFor(err);
  }
  const json = jsonRequested(argv.slice(2));
  const program = new Command(programName(argv))
    .description('Execution memory and evaluation service for AI agents: run the server or talk to one.')
    .version(cliVersion(), '-V, --version', 'print the CLI version')
    .option('--env-file <file>', 'read SERVICE_* settings for client commands from a dotenv file (the shell\'s own variables win)')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // Usage errors of every command: JSON when the command line asks for JSON.
      outputError: (s, write) => write(formatUsageError(s, json, program.name())),
    })
    .addHelpText('after', EXIT_CODE_HELP);
  // Subcommands copy exitOverride and the output settings when they are created, so usage
  // errors anywhere come back here as CommanderError instead of exiting the process.
  attachContext(program, io);

  for (const name of commandsFor(argv.slice(2))) (await COMMANDS[name]()).register(program);
  addDefaultExamples(program);

  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end with exitCode 0; every other commander error is bad usage.
      return err.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
    }
    throw err;
  }
  return exitCodeOf(program);
}
