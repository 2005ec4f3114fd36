import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { MAX_RETENTION_DAYS, MIN_RETENTION_DAYS } from '../src/core/retention.js';
import { addYesOption, canPrompt, confirmDestructive, type YesOptionValues } from './shared/confirm.js';
import { action, ioOf } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { addExamples } from './shared/help.js';
import { addAsyncOptions, viaJobWhenAsked, type AsyncOptionValues } from './shared/async-jobs.js';
import { addClientOptions, integerIn, withClient, type ClientOptionValues } from './shared/options.js';

interface ApplyOptions extends ClientOptionValues, AsyncOptionValues, YesOptionValues {
  dryRun?: boolean;
}

const SOURCES = { project: "this project's setting", tenant: "the tenant's setting", default: 'the default' } as const;

/** DAYS is a whole number of days, or `inherit` (null: fall back to the tenant or the default). */
function daysArgument(value: string): number | null {
  if (value === 'inherit' || value === 'null') return null;
  try {
    return integerIn(MIN_RETENTION_DAYS, MAX_RETENTION_DAYS)(value);
  } catch {
    throw new InvalidArgumentError(`expected a whole number of days from ${MIN_RETENTION_DAYS} to ${MAX_RETENTION_DAYS}, or "inherit"`);
  }
}

/**
 * `service retention …`: the old name of `service governance retention …`, kept (hidden from
 * --help and completion) so existing scripts keep working. Retention is part of governance
 * (docs/behavior.md "Governance").
 */
export function register(program: Command): void {
  addRetentionCommands(program.command('retention', { hidden: true }).description('alias of `service governance retention`'));
}

/** get, set and apply under `group` (`service governance retention`, and its old alias). */
export function addRetentionCommands(group: Command): void {
  const get = group.command('get', { isDefault: true }).description('the retention in effect and where it comes from');
  addClientOptions(get);
  get.action(action(async (opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.governance.retention.get();
      out.result(res, () => `${res.retention_days} days after last update (${SOURCES[res.source]})`);
    })));

  const set = group
    .command('set')
    .description("set the project's retention in days (needs DB auth mode)")
    .argument('<days>', `${MIN_RETENTION_DAYS}-${MAX_RETENTION_DAYS}, or "inherit" to clear the project's value`, daysArgument);
  addClientOptions(set);
  set.action(action(async (days: number | null, opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.governance.retention.set(days);
      out.result(res, () => `retention is now ${res.retention_days} days (${SOURCES[res.source]})`);
    })));

  const apply = group
    .command('apply')
    .description('delete every pattern past its retention (irreversible; try --dry-run first)')
    .option('--dry-run', 'only count what would be deleted');
  addYesOption(apply);
  addClientOptions(apply);
  addAsyncOptions(apply);
  addExamples(apply, ['service governance retention apply --dry-run', 'service governance retention apply --yes   # in a scheduled job']);
  apply.action(action(async (opts: ApplyOptions, command: Command) => {
    const io = ioOf(command);
    const action = 'delete the patterns past retention';
    // Nobody to ask and no --yes: refused before any request.
    if (!opts.dryRun && !opts.yes && !canPrompt(io)) await confirmDestructive(io, opts, { action, question: '' });
    return withClient(opts, command, async (client, out) => {
      if (!opts.dryRun && !opts.yes) {
        // The question carries the number a dry run counted now, so the person confirms a fact.
        const preview = await out.withSpinner('counting…', () => client.governance.retention.apply(true));
        if (preview.purged_count === 0) {
          return out.result(preview, () => 'no pattern is past its retention: nothing deleted');
        }
        const n = preview.purged_count;
        const question = `Permanently delete the ${n} pattern${n === 1 ? '' : 's'} past ${n === 1 ? 'its' : 'their'} retention?`;
        if (!(await confirmDestructive(io, opts, { action, question }))) return ExitCode.FAILURE;
      }
      const body = { dry_run: opts.dryRun === true };
      const res = await viaJobWhenAsked(opts, client, out, { operation: 'retention_apply', body },
        () => out.withSpinner('applying retention…', () => client.governance.retention.apply(body.dry_run)));
      if (res === undefined) return;
      out.result(res, () =>
        res.dry_run
          ? `${res.purged_count} patterns are past retention (dry run: nothing deleted)`
          : `deleted ${res.purged_count} patterns past retention`);
    });
  }));
}
