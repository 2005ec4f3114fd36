import { Option, type Command } from 'commander';
import { OUTCOME_SOURCES, type OutcomeSource } from '../src/core/outcome-types.js';
import { action, ioOf } from './shared/context.js';
import { UsageError } from './shared/exit-codes.js';
import { addExamples } from './shared/help.js';
import { readTextArg } from './shared/input.js';
import { addClientOptions, numberIn, withClient, type ClientOptionValues } from './shared/options.js';

interface OutcomeOptions extends ClientOptionValues {
  passed?: boolean;
  failed?: boolean;
  score?: number;
  detail?: string;
  source?: OutcomeSource;
}

/** `service outcome RECALL_ID KEY --passed|--failed`: how reusing a recalled pattern went (docs/behavior.md "Outcomes"). */
export function register(program: Command): void {
  const cmd = program
    .command('outcome')
    .description("report how reusing one match of a recall went (the recall's recall_id and the match's key)")
    .argument('<recall_id>', 'the recall_id of the recall answer')
    .argument('<pattern_key>', 'the key of the match that was reused, e.g. patterns/0190b5c2a1f3')
    .addOption(new Option('--passed', 'the reuse worked (tests passed)').conflicts('failed'))
    .addOption(new Option('--failed', 'the reuse did not work').conflicts('passed'))
    .option('--score <n>', 'how well it worked, 0 to 10', numberIn(0, 10))
    .option('--detail <text>', 'why (a lesson shown with the pattern next time): literal text, - for stdin, @file')
    .addOption(new Option('--source <source>', 'who judged it').choices(OUTCOME_SOURCES));
  addClientOptions(cmd);
  addExamples(cmd, [
    'service outcome 0mbx3k2a0001a2b3c4 patterns/0190b5c2a1f3 --passed --source tests',
    "service outcome 0mbx3k2a0001a2b3c4 patterns/0190b5c2a1f3 --failed --detail 'off by one on empty input'",
  ]);
  cmd.action(action(async (recallId: string, patternKey: string, opts: OutcomeOptions, command: Command) => {
    if (opts.passed !== true && opts.failed !== true) throw new UsageError('say how it went: --passed or --failed');
    const detail = opts.detail === undefined ? undefined : await readTextArg(opts.detail, ioOf(command).stdin, '--detail');
    return withClient(opts, command, async (client, out) => {
      const res = await client.reportOutcome({
        recall_id: recallId, pattern_key: patternKey, passed: opts.passed === true, score: opts.score, detail, source: opts.source,
      });
      out.result(res, () => `${res.replaced ? 'replaced the outcome' : 'recorded'}: ${res.pattern_key} ${res.passed ? 'passed' : 'failed'} for recall ${res.recall_id}`);
    });
  }));
}
