import { Command, CommanderError } from 'commander';
import { attachContext, exitCodeOf, processIo, type Io } from './shared/context.js';
import { EXIT_CODE_HELP, ExitCode } from './shared/exit-codes.js';
import { cliVersion } from './shared/package-info.js';
import { register as registerServe } from './serve.js';
import { register as registerReindex } from './reindex.js';
import { register as registerLearn } from './learn.js';
import { register as registerRecall } from './recall.js';
import { register as registerExport } from './export.js';
import { register as registerImport } from './import.js';
import { register as registerHealth } from './health.js';
import { register as registerVersion } from './version.js';
import { register as registerEvaluate } from './evaluate.js';
import { register as registerCompose } from './compose.js';
import { register as registerEvolve } from './evolve.js';
import { register as registerFeedback } from './feedback.js';
import { register as registerMigrate } from './migrate.js';
import { register as registerMigrateData } from './migrate-data.js';
import { register as registerBootstrap } from './bootstrap.js';
import { register as registerKeys } from './keys.js';
import { register as registerAnalytics } from './analytics.js';
import { register as registerRetention } from './retention.js';
import { register as registerJobs } from './jobs.js';
import { register as registerAging } from './aging.js';
import { register as registerMcp } from './mcp.js';
import { register as registerBilling } from './billing.js';

/**
 * The `service` program. Returns the exit code instead of exiting, so tests can call it and
 * bin/service.js decides how the process ends. `argv` is shaped like process.argv.
 * To add a command: create commands/<name>.ts exporting register(program) and add ONE line below.
 */
export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const program = new Command('service')
    .description('Execution memory and evaluation service for AI agents: run the server or talk to one.')
    .version(cliVersion(), '-V, --version', 'print the CLI version')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .addHelpText('after', EXIT_CODE_HELP);
  // Subcommands copy exitOverride and the output settings when they are created, so usage
  // errors anywhere come back here as CommanderError instead of exiting the process.
  attachContext(program, io);

  registerServe(program);
  registerReindex(program);
  registerLearn(program);
  registerRecall(program);
  registerExport(program);
  registerImport(program);
  registerHealth(program);
  registerVersion(program);
  registerEvaluate(program);
  registerCompose(program);
  registerEvolve(program);
  registerFeedback(program);
  registerMigrate(program);
  registerMigrateData(program);
  registerBootstrap(program);
  registerKeys(program);
  registerAnalytics(program);
  registerRetention(program);
  registerJobs(program);
  registerAging(program);
  registerMcp(program);
  registerBilling(program);

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
