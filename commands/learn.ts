import { Option, type Command } from 'commander';
import { CLASSIFICATIONS, SOURCES, type Classification, type Source } from '../src/core/types.js';
import { action, ioOf } from './shared/context.js';
import { assertSingleStdin, readTextArg } from './shared/input.js';
import { addClientOptions, finiteNumber, withClient, type ClientOptionValues } from './shared/options.js';

interface LearnOptions extends ClientOptionValues {
  task: string;
  code: string;
  evalScore: number;
  output?: string;
  runId?: string;
  classification?: Classification;
  source: Source;
  author?: string;
  verifyDuplicates?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('learn')
    .description('store a successful run as a reusable pattern')
    .requiredOption('--task <text>', 'task description: literal text, - for stdin, @file to read a file')
    .requiredOption('--code <text>', 'the solution: literal text, - for stdin, @file to read a file')
    .requiredOption('--eval-score <score>', 'quality of the run, 0 to 10', finiteNumber)
    .option('--output <text>', "the agent's output: literal text, - for stdin, @file")
    .option('--run-id <id>', 'your correlation id for this run')
    .addOption(new Option('--classification <level>', 'data classification (server default: internal)').choices(CLASSIFICATIONS))
    .addOption(new Option('--source <source>', 'where the run comes from').choices(SOURCES).default('cli'))
    .option('--author <name>', 'agent or user that produced the run')
    .option('--verify-duplicates', 'ask the server\'s LLM before merging into a near-identical pattern');
  addClientOptions(cmd);

  cmd.action(action(async (opts: LearnOptions, command: Command) => {
    const { stdin } = ioOf(command);
    assertSingleStdin({ '--task': opts.task, '--code': opts.code, '--output': opts.output });
    const task = await readTextArg(opts.task, stdin, '--task');
    const code = await readTextArg(opts.code, stdin, '--code');
    const output = opts.output === undefined ? undefined : await readTextArg(opts.output, stdin, '--output');

    return withClient(opts, command, async (client, out) => {
      const res = await out.withSpinner('learning…', () => client.learn({
        task,
        code,
        eval_score: opts.evalScore,
        output,
        run_id: opts.runId,
        classification: opts.classification,
        source: opts.source,
        author: opts.author,
        verify_duplicates: opts.verifyDuplicates === true ? true : undefined,
      }));
      for (const warning of res.warnings ?? []) out.note(`warning: ${warning}`);
      out.result(res, () => {
        const c = out.color;
        const head = res.stored
          ? `${c.green('stored')}${res.pattern_key ? ` ${res.pattern_key}` : ''}`
          : `${c.yellow('not stored')}: a near-identical pattern with an equal or better score already exists`;
        const lines = [head, `pattern count: ${res.pattern_count}`];
        if (res.redacted) lines.push(c.dim('sensitive content was redacted before storage'));
        if (res.duplicate_check) lines.push(c.dim(`duplicate check: ${res.duplicate_check.verdict} (${res.duplicate_check.reason})`));
        return lines.join('\n');
      });
    });
  }));
}
