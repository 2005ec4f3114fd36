import type { Command } from 'commander';
import { addYesOption, confirmDestructive, type YesOptionValues } from './shared/confirm.js';
import { action, ioOf } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { addExamples } from './shared/help.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';

/** `service patterns get KEY | delete KEY`: one stored pattern by its key. */
export function register(program: Command): void {
  const patterns = program.command('patterns').description('show or delete one stored pattern by its key (patterns/<id>)');

  const get = patterns
    .command('get')
    .description('show a stored pattern with all its fields')
    .argument('<key>', 'the pattern key, e.g. patterns/0190b5c2a1f3 (from `service recall`)');
  addClientOptions(get);
  addExamples(get, ['service patterns get patterns/0190b5c2a1f3', 'service patterns get patterns/0190b5c2a1f3 --json | jq -r .code']);
  get.action(action(async (key: string, opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const p = await client.getPattern(key);
      out.result(p, () => {
        const c = out.color;
        return [
          `${c.bold(p.key)}  success ${p.success_score}  eval ${p.eval_score}  reused ${p.reuse_count}x  ${p.classification}  source ${p.source}`,
          `updated ${p.updated_at}${p.expires_at ? `  expires ${p.expires_at}` : ''}${p.redacted ? '  (redacted)' : ''}`,
          '',
          c.bold('task'),
          p.task,
          '',
          c.bold('code'),
          p.code,
          ...(p.output ? ['', c.bold('output'), p.output] : []),
        ].join('\n');
      });
    })));

  const del = patterns
    .command('delete')
    .description('permanently delete a pattern with its vector, eval history and tags (admin role)')
    .argument('<key>', 'the pattern key, e.g. patterns/0190b5c2a1f3');
  addYesOption(del);
  addClientOptions(del);
  addExamples(del, ['service patterns delete patterns/0190b5c2a1f3', 'service patterns delete patterns/0190b5c2a1f3 --yes   # in a script']);
  del.action(action(async (key: string, opts: ClientOptionValues & YesOptionValues, command: Command) => {
    if (!(await confirmDestructive(ioOf(command), opts, { action: `delete ${key}`, question: `Permanently delete ${key}?` }))) return ExitCode.FAILURE;
    return withClient(opts, command, async (client, out) => {
      const res = await client.deletePattern(key);
      out.result(res, () => `deleted ${res.pattern_key}`);
    });
  }));
}
