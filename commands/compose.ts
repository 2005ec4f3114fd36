import type { Command } from 'commander';
import type { ComposeResponse } from '../src/client/index.js';
import { action, ioOf } from './shared/context.js';
import { addAsyncOptions, viaJobWhenAsked, type AsyncOptionValues } from './shared/async-jobs.js';
import { readTextArg } from './shared/input.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';
import { snippet, table, type Output } from './shared/output.js';

export function register(program: Command): void {
  const cmd = program
    .command('compose')
    .description('(experimental) split a task into a 2-4 stage pipeline, each stage matched to stored patterns')
    .argument('<task>', 'the task: literal text, - for stdin, @file to read a file');
  addClientOptions(cmd);
  addAsyncOptions(cmd);

  cmd.action(action(async (taskArg: string, opts: ClientOptionValues & AsyncOptionValues, command: Command) => {
    const task = await readTextArg(taskArg, ioOf(command).stdin, 'task');
    return withClient(opts, command, async (client, out) => {
      const res = await viaJobWhenAsked(opts, client, out, { operation: 'compose', body: { task } },
        () => out.withSpinner('composing…', () => client.llm.compose({ task })));
      if (res === undefined) return;
      out.result(res, () => renderPipeline(out, res));
    });
  }));
}

const list = (xs: string[]) => (xs.length === 0 ? '-' : xs.join(', '));

export function renderPipeline(out: Output, res: ComposeResponse): string {
  const c = out.color;
  const rows = res.stages.map((s, i) => [
    String(i + 1), s.name, list(s.reads), list(s.writes), s.reuse_tier, s.similarity.toFixed(3), snippet(s.task, 50),
  ]);
  const lines = [table(['#', 'stage', 'reads', 'writes', 'tier', 'similarity', 'task'], rows, c), ''];
  if (res.valid) lines.push(c.green('valid: every read is produced by an earlier stage or named in the task'));
  else lines.push(c.red('invalid pipeline:'), ...res.contract_errors.map((e) => `  - ${e}`));
  return lines.join('\n');
}
