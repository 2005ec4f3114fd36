import type { Command } from 'commander';
import { AgingResponse } from '../src/contracts/memory.js';
import { addAsyncOptions, viaJobWhenAsked, type AsyncOptionValues } from './shared/async-jobs.js';
import { action } from './shared/context.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';

/** `service aging`: decay pattern scores (x0.98 per week) and prune the faded ones. */
export function register(program: Command): void {
  const cmd = program
    .command('aging')
    .description('decay the success scores of stored patterns (x0.98 per week) and prune those below 0.1');
  addClientOptions(cmd);
  addAsyncOptions(cmd);
  cmd.action(action(async (opts: ClientOptionValues & AsyncOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await viaJobWhenAsked(opts, client, out, { operation: 'aging', schema: AgingResponse },
        () => out.withSpinner('aging…', () => client.aging()));
      if (res === undefined) return;
      out.result(res, () => `aged ${res.aged} patterns, pruned ${res.pruned}; ${res.remaining} remain`);
    })));
}
