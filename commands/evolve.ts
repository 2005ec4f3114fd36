import type { Command } from 'commander';
import { action, ioOf } from './shared/context.js';
import { addAsyncOptions, viaJobWhenAsked, type AsyncOptionValues } from './shared/async-jobs.js';
import { assertSingleStdin, readTextArg } from './shared/input.js';
import { addClientOptions, integerIn, withClient, type ClientOptionValues } from './shared/options.js';

interface EvolveOptions extends ClientOptionValues, AsyncOptionValues {
  role: string;
  prompt: string;
  numIssues?: number;
}

export function register(program: Command): void {
  const cmd = program
    .command('evolve')
    .description('(experimental) improve an agent prompt from recurring feedback; a judge decides whether to accept it')
    .requiredOption('--role <text>', "the agent's role, e.g. \"python backend engineer\"")
    .requiredOption('--prompt <text>', 'the current prompt: literal text, - for stdin, @file to read a file')
    .option('--num-issues <n>', 'recurring issues to address, 1 to 20 (server default 5)', integerIn(1, 20));
  addClientOptions(cmd);
  addAsyncOptions(cmd);

  cmd.action(action(async (opts: EvolveOptions, command: Command) => {
    const { stdin } = ioOf(command);
    assertSingleStdin({ '--role': opts.role, '--prompt': opts.prompt });
    const role = await readTextArg(opts.role, stdin, '--role');
    const prompt = await readTextArg(opts.prompt, stdin, '--prompt');
    return withClient(opts, command, async (client, out) => {
      const body = { role, current_prompt: prompt, num_issues: opts.numIssues };
      const res = await viaJobWhenAsked(opts, client, out, { operation: 'evolve', body },
        () => out.withSpinner('evolving…', () => client.llm.evolve(body)));
      if (res === undefined) return;
      out.result(res, () => {
        const c = out.color;
        const lines = [res.accepted ? c.green('accepted') : c.yellow('not accepted'), res.reason];
        if (res.issues_addressed.length > 0) lines.push('', c.bold('issues addressed'), ...res.issues_addressed.map((i) => `  - ${i}`));
        if (res.changes.length > 0) lines.push('', c.bold('changes'), ...res.changes.map((ch) => `  - ${ch}`));
        lines.push('', c.bold(res.accepted ? 'improved prompt' : 'candidate prompt'), res.improved_prompt);
        return lines.join('\n');
      });
    });
  }));
}
