import type { Command } from 'commander';
import { action } from './shared/context.js';
import { addExamples } from './shared/help.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';
import { table } from './shared/output.js';

const percent = (x: number | null) => (x === null ? '-' : `${Math.round(x * 1000) / 10}%`);

/** `service metrics`: the project's run and reuse figures (GET /v1/metrics). */
export function register(program: Command): void {
  const cmd = program.command('metrics').description("the project's runs, success rate, average eval score, pattern count and reuse rate");
  addClientOptions(cmd);
  addExamples(cmd, ['service metrics', 'service metrics --json | jq .reuse_rate']);
  cmd.action(action(async (opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const m = await client.metrics();
      out.result(m, () => table(['metric', 'value'], [
        ['runs', String(m.runs)],
        ['success rate', percent(m.success_rate)],
        ['average eval score', m.avg_eval_score === null ? '-' : String(Math.round(m.avg_eval_score * 100) / 100)],
        ['patterns', String(m.pattern_count)],
        ['reuse rate', percent(m.reuse_rate)],
      ], out.color));
    })));
}
