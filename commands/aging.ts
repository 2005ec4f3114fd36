import type { Command } from 'commander';
import { addAsyncOptions, viaJobWhenAsked, type AsyncOptionValues } from './shared/async-jobs.js';
import { addYesOption, canPrompt, confirmDestructive, type YesOptionValues } from './shared/confirm.js';
import { action, ioOf } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { addExamples } from './shared/help.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';

interface AgingOptions extends ClientOptionValues, AsyncOptionValues, YesOptionValues {
  dryRun?: boolean;
}

/** `service aging`: decay pattern scores (x0.98 per week) and prune the faded ones. */
export function register(program: Command): void {
  const cmd = program
    .command('aging')
    .description('decay the success scores of stored patterns (x0.98 per week) and prune those below 0.1 (irreversible)')
    .option('--dry-run', 'only count what would be decayed and pruned; change nothing');
  addYesOption(cmd);
  addClientOptions(cmd);
  addAsyncOptions(cmd);
  addExamples(cmd, ['service aging --dry-run', 'service aging --yes   # in a cron job']);
  cmd.action(action(async (opts: AgingOptions, command: Command) => {
    const dryRun = opts.dryRun === true;
    const io = ioOf(command);
    return withClient(opts, command, async (client, out) => {
      if (!dryRun) {
        // On a terminal the question says what a dry run counted just before; without one,
        // nobody is asked and nothing is sent without --yes.
        const preview = !opts.yes && canPrompt(io) ? await out.withSpinner('counting…', () => client.aging({ dry_run: true })) : null;
        const question = preview
          ? `Decay the scores of ${preview.aged} patterns and permanently delete the ${preview.pruned} that fall below 0.1 (${preview.remaining} would remain)?`
          : 'Decay every pattern\'s score and permanently delete those below 0.1?';
        if (!(await confirmDestructive(io, opts, { action: 'age patterns (pruned patterns are deleted)', question }))) return ExitCode.FAILURE;
      }
      const res = await viaJobWhenAsked(opts, client, out, { operation: 'aging', body: dryRun ? { dry_run: true } : undefined },
        () => out.withSpinner('aging…', () => client.aging({ dry_run: dryRun })));
      if (res === undefined) return;
      out.result(res, () => res.dry_run
        ? `dry run: ${res.aged} patterns would be decayed and ${res.pruned} pruned; ${res.remaining} would remain`
        : `aged ${res.aged} patterns, pruned ${res.pruned}; ${res.remaining} remain`);
    });
  }));
}
