import { Option, type Command } from 'commander';
import type { LearnRequest } from '../src/client/index.js';
import { CLASSIFICATIONS, SOURCES, type Classification, type Source } from '../src/core/types.js';
import { batchInput, maxLineBytesOption, numberedLines, parseObjectLine, runLines, type InputLine, type LineRequest } from './shared/batch-lines.js';
import { action, errorViewOf, ioOf } from './shared/context.js';
import { UsageError } from './shared/exit-codes.js';
import { assertSingleStdin, readTextArg } from './shared/input.js';
import { addClientOptions, finiteNumber, integerIn, withClient, type ClientOptionValues } from './shared/options.js';

interface LearnOptions extends ClientOptionValues {
  task?: string;
  code?: string;
  evalScore?: number;
  output?: string;
  runId?: string;
  classification?: Classification;
  source: Source;
  author?: string;
  verifyDuplicates?: boolean;
  batch?: string | true;
  concurrency: number;
  maxLineBytes: number;
}

/** The flags a single learn needs, as commander would name them when missing. */
const REQUIRED = [['task', "--task <text>"], ['code', '--code <text>'], ['evalScore', '--eval-score <score>']] as const;

export function register(program: Command): void {
  const cmd = program
    .command('learn')
    .description('store a successful run as a reusable pattern')
    .option('--task <text>', 'task description: literal text, - for stdin, @file to read a file (required without --batch)')
    .option('--code <text>', 'the solution: literal text, - for stdin, @file to read a file (required without --batch)')
    .option('--eval-score <score>', 'quality of the run, 0 to 10 (required without --batch)', finiteNumber)
    .option('--output <text>', "the agent's output: literal text, - for stdin, @file")
    .option('--run-id <id>', 'your correlation id for this run')
    .addOption(new Option('--classification <level>', 'data classification (server default: internal)').choices(CLASSIFICATIONS))
    .addOption(new Option('--source <source>', 'where the run comes from').choices(SOURCES).default('cli'))
    .option('--author <name>', 'agent or user that produced the run')
    .option('--verify-duplicates', 'ask the server\'s LLM before merging into a near-identical pattern')
    .option('--batch [file]', 'learn every line of an NDJSON FILE (- or no value: stdin), one run per line {task, code, eval_score, …}; NDJSON out')
    .option('--concurrency <n>', 'runs learned at the same time with --batch, 1 to 32', integerIn(1, 32), 4)
    .addOption(maxLineBytesOption());
  addClientOptions(cmd);

  cmd.action(action(async (opts: LearnOptions, command: Command) => {
    const io = ioOf(command);
    if (opts.batch !== undefined) {
      const given = (['task', 'code', 'evalScore', 'output', 'runId'] as const).filter((k) => opts[k] !== undefined);
      if (given.length > 0) throw new UsageError('--batch takes each run from its line: drop --task, --code, --eval-score, --output and --run-id');
      const input = await batchInput(opts.batch === true ? '-' : opts.batch, io);
      return withClient(opts, command, async (client) => runLines(io, numberedLines(input, { maxBytes: opts.maxLineBytes }), {
        concurrency: opts.concurrency, view: errorViewOf(command),
      }, learnLine(opts), (request) => client.learn(request)));
    }
    const missing = REQUIRED.find(([k]) => opts[k] === undefined);
    if (missing) throw new UsageError(`required option '${missing[1]}' not specified`);
    const { stdin } = io;
    assertSingleStdin({ '--task': opts.task, '--code': opts.code, '--output': opts.output });
    const task = await readTextArg(opts.task!, stdin, '--task');
    const code = await readTextArg(opts.code!, stdin, '--code');
    const output = opts.output === undefined ? undefined : await readTextArg(opts.output, stdin, '--output');

    return withClient(opts, command, async (client, out) => {
      const res = await out.withSpinner('learning…', () => client.learn({
        task,
        code,
        eval_score: opts.evalScore!,
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
          : `${c.yellow('not stored')}: a near-identical pattern with an equal or better score already exists${
            res.pattern_key ? ` (kept ${res.pattern_key}; this run's score joins its eval history)` : ''}`;
        const lines = [head, `pattern count: ${res.pattern_count}`];
        if (res.redacted) lines.push(c.dim('sensitive content was redacted before storage'));
        if (res.duplicate_check) lines.push(c.dim(`duplicate check: ${res.duplicate_check.verdict} (${res.duplicate_check.reason})`));
        return lines.join('\n');
      });
    });
  }));
}

const LEARN_FIELDS = new Set(['task', 'code', 'eval_score', 'output', 'run_id', 'classification', 'source', 'author', 'expires_at', 'verify_duplicates']);

/** A --batch line: one run as a JSON object of learn fields (and an `id` echoed back). */
function learnLine(opts: LearnOptions) {
  const defaults: Partial<LearnRequest> = {
    classification: opts.classification,
    source: opts.source,
    author: opts.author,
    verify_duplicates: opts.verifyDuplicates === true ? true : undefined,
  };
  return (input: InputLine): LineRequest<LearnRequest> => {
    const { id, ...fields } = parseObjectLine(input.text);
    const unknown = Object.keys(fields).filter((k) => !LEARN_FIELDS.has(k));
    if (unknown.length > 0) throw new UsageError(`unknown field ${unknown.join(', ')} (learn fields: ${[...LEARN_FIELDS].join(', ')}, and id)`);
    return { id, request: { ...defaults, ...fields } as LearnRequest };
  };
}
