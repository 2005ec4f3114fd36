import type { Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import type { BillingStatusResponse } from '../src/client/index.js';
import { action } from './shared/context.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';
import { table } from './shared/output.js';

/** `service billing status` (+): the tenant's plan, status and usage (table on a TTY, JSON piped). */
export function register(program: Command): void {
  const billing = program.command('billing').description('hosted billing: plan, usage and limits');
  const status = billing.command('status').description("show the tenant's plan, subscription status and usage against its limits");
  addClientOptions(status);

  status.action(action(async (opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.billing.status();
      out.result(res, () => render(res, out.color));
    })));
}

const limit = (n: number) => (n < 0 ? 'unlimited' : String(n));

function render(s: BillingStatusResponse, c: ChalkInstance): string {
  const state = s.status === 'active' ? c.green(s.status) : c.yellow(s.status);
  const overage = s.overage_enabled
    ? `on${s.overage_budget_cap_cents === null ? '' : `, cap ${(s.overage_budget_cap_cents / 100).toFixed(2)} USD`}`
    : 'off';
  return [
    `plan ${c.bold(s.plan_tier)} (${s.billing_interval}ly), ${state}${s.billing_enabled ? '' : ' (billing off: nothing enforced)'}`,
    table(['usage', 'used', 'limit'], [
      ['eval runs (this month)', String(s.eval_runs_used), limit(s.eval_runs_limit)],
      ['patterns', String(s.patterns_used), limit(s.patterns_limit)],
      ['projects', String(s.projects_used), limit(s.projects_limit)],
    ], c),
    `period end ${s.period_end}; monthly usage resets ${s.reset_date}; overage ${overage}`,
  ].join('\n');
}
